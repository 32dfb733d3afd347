import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import { GoneError, KubeApiError } from '../client/errors.ts';
import { collectionPath, type KubeObject, type ResourceType } from '../client/resource-type.ts';
import type { Store } from './store.ts';
import { sleepUntilAborted } from '../helpers/sleep-until-aborted.ts';

export interface ReflectorOptions {
  /** Watch one namespace; undefined watches all. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * A watch that carries nothing (no event, no bookmark) for this long is presumed dead and
   * reopened from the last resourceVersion. The API server sends a bookmark about every minute,
   * so the default of 5 minutes never cuts a healthy watch. Default 300 s.
   */
  idleTimeoutMs?: number;
  /** Server-side watch timeout range; each watch picks a random value in it. Default 300–600 s. */
  watchTimeoutSeconds?: [number, number];
  /** Backoff between failed attempts: initial and maximum. Default 800 ms and 30 s. */
  backoffMs?: [number, number];
  /**
   * Rewrites each object before it is stored (e.g. to drop what no reconcile reads, so the cache
   * holds less). Must keep metadata.name, namespace, uid and resourceVersion.
   */
  transform?: (obj: KubeObject) => KubeObject;
}

/** Counters that say what the reflector has been through; tests and metrics read them. */
export interface ReflectorStats {
  lists: number;
  watches: number;
  relistsAfterGone: number;
  idleTimeouts: number;
  errors: number;
  lastError?: string;
  resourceVersion: string;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; message?: string; reason?: string };
}

class RelistNeeded extends Error {}

/**
 * Keeps a Store equal to the API server's state of one kind: list, then watch from the list's
 * resourceVersion with bookmarks; relist on 410 Gone; reopen quiet or broken watches with backoff.
 * It never stops on an error, only when its signal aborts. resourceVersion is opaque: it is only
 * ever handed back to the API server, never compared.
 */
export class Reflector<T extends KubeObject> {
  readonly stats: ReflectorStats = {
    lists: 0,
    watches: 0,
    relistsAfterGone: 0,
    idleTimeouts: 0,
    errors: 0,
    resourceVersion: '',
  };
  readonly #client: KubeClient;
  readonly #type: ResourceType<T>;
  readonly #store: Store<T>;
  readonly #options: ReflectorOptions;
  readonly #log: Logger;
  #synced = false;
  #onSynced: (() => void)[] = [];

  constructor(
    client: KubeClient,
    type: ResourceType<T>,
    store: Store<T>,
    log: Logger,
    options: ReflectorOptions = {},
  ) {
    this.#client = client;
    this.#type = type;
    this.#store = store;
    this.#options = options;
    this.#log = log.child({ reflector: `${type.kind}${options.namespace ? `/${options.namespace}` : ''}` });
  }

  /** True once the first list has been stored. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Resolves once the first list has been stored. */
  waitForSync(): Promise<void> {
    return this.#synced ? Promise.resolve() : new Promise((resolve) => this.#onSynced.push(resolve));
  }

  /** Runs until `signal` aborts. Never throws: every failure is logged, counted and retried. */
  async run(signal: AbortSignal): Promise<void> {
    const [initialBackoff, maxBackoff] = this.#options.backoffMs ?? [800, 30_000];
    let backoff = initialBackoff;
    let needList = true;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#list(signal);
          needList = false;
        }
        const progressed = await this.#watch(signal);
        failures = 0;
        if (progressed) {
          backoff = initialBackoff; // a watch that ended after delivering (server timeout) reopens at once
        } else {
          await sleepUntilAborted(backoff * (0.5 + Math.random() / 2), signal);
          backoff = Math.min(maxBackoff, backoff * 2);
        }
        continue;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof RelistNeeded || error instanceof GoneError) {
          this.stats.relistsAfterGone++;
          this.#log.info(
            { resourceVersion: this.stats.resourceVersion },
            'resourceVersion too old (410 Gone): relisting',
          );
          needList = true;
          continue;
        }
        this.stats.errors++;
        this.stats.lastError = String(error);
        // A watch that keeps failing from the same resourceVersion may never recover from it.
        if (++failures >= 3) needList = true;
        const retryAfterMs =
          error instanceof KubeApiError && error.retryAfterSeconds ? error.retryAfterSeconds * 1000 : 0;
        const wait = Math.max(retryAfterMs, backoff * (0.5 + Math.random() / 2));
        this.#log.warn(
          { err: String(error), retryInMs: Math.round(wait), relist: needList },
          'list/watch failed; retrying',
        );
        backoff = Math.min(maxBackoff, backoff * 2);
        await sleepUntilAborted(wait, signal);
      }
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    const { items, resourceVersion } = await this.#client.list(this.#type, {
      ...(this.#options.namespace ? { namespace: this.#options.namespace } : {}),
      ...(this.#options.labelSelector ? { labelSelector: this.#options.labelSelector } : {}),
      ...(this.#options.fieldSelector ? { fieldSelector: this.#options.fieldSelector } : {}),
      signal,
    });
    const transform = this.#options.transform;
    this.#store.replace(
      transform ? items.map((item) => transform(item) as T) : items,
      this.#type.namespaced ? this.#options.namespace : undefined,
    );
    this.stats.lists++;
    this.stats.resourceVersion = resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#onSynced.splice(0)) resolve();
    }
  }

  /** One watch from the current resourceVersion; resolves true if it delivered anything. */
  async #watch(signal: AbortSignal): Promise<boolean> {
    const [low, high] = this.#options.watchTimeoutSeconds ?? [300, 600];
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? 300_000;
    const watchAbort = new AbortController();
    const stopWatch = () => watchAbort.abort();
    signal.addEventListener('abort', stopWatch, { once: true });
    let response: IncomingMessage | undefined;
    let idle: NodeJS.Timeout | undefined;
    let delivered = false;
    try {
      this.stats.watches++;
      response = await this.#client.transport.stream({
        method: 'GET',
        path: collectionPath(this.#type, this.#options.namespace),
        query: {
          watch: true,
          resourceVersion: this.stats.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: Math.round(low + Math.random() * (high - low)),
          labelSelector: this.#options.labelSelector,
          fieldSelector: this.#options.fieldSelector,
        },
        signal: watchAbort.signal,
      });
      const armIdleTimer = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          this.stats.idleTimeouts++;
          this.#log.warn({ idleTimeoutMs }, 'watch silent for too long; reopening it');
          response?.destroy();
        }, idleTimeoutMs);
      };
      armIdleTimer();
      let buffered = '';
      response.setEncoding('utf8');
      for await (const chunk of response as AsyncIterable<string>) {
        armIdleTimer();
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line) {
            this.#apply(JSON.parse(line) as WatchEvent);
            delivered = true;
          }
        }
      }
    } catch (error) {
      // A destroyed (idle) or aborted stream ends the loop with an error; both mean "reopen".
      if (signal.aborted || (response?.destroyed && !(error instanceof RelistNeeded))) return delivered;
      throw error;
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', stopWatch);
      response?.destroy();
    }
    return delivered;
  }

  #apply(event: WatchEvent): void {
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.#store.upsert(
          (this.#options.transform ?? ((o: KubeObject) => o))({
            apiVersion: this.#type.apiVersion,
            kind: this.#type.kind,
            ...event.object,
          }) as T,
        );
        break;
      case 'DELETED':
        this.#store.remove({
          apiVersion: this.#type.apiVersion,
          kind: this.#type.kind,
          ...event.object,
        } as T);
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR':
        if (event.object.code === 410) throw new RelistNeeded(event.object.message);
        throw new Error(
          `watch error ${event.object.code ?? '?'} ${event.object.reason ?? ''}: ${event.object.message ?? ''}`,
        );
    }
    if (rv) this.stats.resourceVersion = rv;
  }
}
