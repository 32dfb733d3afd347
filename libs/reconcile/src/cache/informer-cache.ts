import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject, ResourceType } from '../client/resource-type.ts';
import { Informer, type InformerOptions } from './informer.ts';

/** Hands out one shared Informer per kind (and selector), so controllers never watch twice. */
export class InformerCache {
  readonly #client: KubeClient;
  readonly #log: Logger;
  readonly #defaults: InformerOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  #started = false;

  constructor(client: KubeClient, log: Logger, defaults: InformerOptions = {}) {
    this.#client = client;
    this.#log = log;
    this.#defaults = defaults;
  }

  /** The shared informer for a kind; created on first use, started if the cache already runs. */
  informer<T extends KubeObject>(
    type: ResourceType<T>,
    options: Pick<InformerOptions, 'labelSelector' | 'fieldSelector'> = {},
  ): Informer<T> {
    const key = this.#key(type, options);
    let informer = this.#informers.get(key) as Informer<T> | undefined;
    if (!informer) {
      informer = new Informer(this.#client, type, this.#log, { ...this.#defaults, ...options });
      this.#informers.set(key, informer as unknown as Informer<KubeObject>);
      if (this.#started) informer.start();
    }
    return informer;
  }

  /**
   * The informer of a kind without selectors, only if one was already made; never creates one.
   */
  existing<T extends KubeObject>(type: ResourceType<T>): Informer<T> | undefined {
    return this.#informers.get(this.#key(type, {})) as Informer<T> | undefined;
  }

  /** True when some informer of this kind exists, selected or not. */
  watches(type: ResourceType): boolean {
    return this.all().some((i) => i.type.apiVersion === type.apiVersion && i.type.kind === type.kind);
  }

  #key(type: ResourceType, options: Pick<InformerOptions, 'labelSelector' | 'fieldSelector'>): string {
    return `${type.apiVersion}/${type.kind}?${options.labelSelector ?? ''}&${options.fieldSelector ?? ''}`;
  }

  /** Every informer handed out so far. */
  all(): Informer<KubeObject>[] {
    return [...this.#informers.values()];
  }

  start(): void {
    this.#started = true;
    for (const informer of this.#informers.values()) informer.start();
  }

  get synced(): boolean {
    return this.all().every((i) => i.synced);
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.all().map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((i) => i.stop()));
    this.#started = false;
  }
}
