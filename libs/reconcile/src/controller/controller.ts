import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import { groupOf, type KubeObject, type ResourceType } from '../client/resource-type.ts';
import type { InformerCache } from '../cache/informer-cache.ts';
import type { Informer } from '../cache/informer.ts';
import { keyOf, parseKey, type ObjectKey } from '../cache/object-key.ts';
import type { EventRecorder } from '../events/event-recorder.ts';
import type { ControllerMetrics } from '../metrics/controller-metrics.ts';
import { WorkQueue } from '../queue/work-queue.ts';
import type { RateLimiter } from '../queue/rate-limiter.ts';
import type { ChangeEvent, Predicate } from './predicates.ts';

/** What a reconcile asks for next. Returning nothing means "converged, wait for a change". */
export interface ReconcileResult {
  /** Reconcile again after this many milliseconds (resets the backoff). */
  requeueAfterMs?: number;
  /** Reconcile again with backoff, without counting an error. */
  requeue?: boolean;
}

/** Everything a reconcile needs, bound to one request. */
export interface ReconcileContext {
  /** pino child logger bound to controller, namespace, name and reconcileID. */
  log: Logger;
  client: KubeClient;
  events: EventRecorder;
  /** Reads from the shared informer caches (never from the API server). */
  cache: CacheReader;
  /** Aborted when the manager shuts down and the drain deadline passes. */
  signal: AbortSignal;
  reconcileId: string;
}

/** Reads objects of kinds the manager watches from their shared informers. */
export interface CacheReader {
  get<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): T | undefined;
  list<T extends KubeObject>(type: ResourceType<T>, namespace?: string): T[];
  /** Objects of `type` whose ownerReferences name `ownerUid`. */
  ownedBy<T extends KubeObject>(type: ResourceType<T>, ownerUid: string): T[];
}

// `void` lets a reconcile that has nothing to ask for simply not return anything.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
export type Reconcile = (request: ObjectKey, context: ReconcileContext) => Promise<ReconcileResult | void>;

/** Watch another kind and map its objects to the primary objects to reconcile. */
export interface WatchSpec<U extends KubeObject = KubeObject> {
  type: ResourceType<U>;
  map: (obj: U) => ObjectKey[];
  predicates?: Predicate<U>[];
  /**
   * Watch and cache only the objects these selectors match (e.g. the pods the operator made,
   * never every pod in the cluster). The informer is shared: `manager.cache.informer(type,
   * { labelSelector })` returns the same one, for reading its store in a reconcile.
   */
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in logs, metrics and the queue. */
  name: string;
  /** The primary kind: its changes enqueue itself. */
  for: ResourceType<T>;
  /** Owned kinds: a change to one enqueues its controller owner of the primary kind. */
  owns?: ResourceType[];
  /** Other kinds, mapped to primary keys by a function. */
  watches?: WatchSpec[];
  /** Filters for the primary kind's changes (all must pass). */
  predicates?: Predicate<T>[];
  /** Reconciles running at once, never two for one key. Default 1. */
  maxConcurrentReconciles?: number;
  rateLimiter?: RateLimiter;
  reconcile: Reconcile;
}

export interface ControllerDeps {
  client: KubeClient;
  cache: InformerCache;
  events: EventRecorder;
  metrics: ControllerMetrics;
  log: Logger;
}

/**
 * Turns informer changes into keys on a work queue and runs the reconcile function on them with
 * bounded concurrency. A thrown error or rejected promise backs off that key and is logged with
 * it; it never crashes the process.
 */
export class Controller<T extends KubeObject> {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #options: ControllerOptions<T>;
  readonly #deps: ControllerDeps;
  readonly #log: Logger;
  readonly #reader: CacheReader;
  #workers: Promise<void>[] = [];
  #abort = new AbortController();
  #running = false;

  constructor(options: ControllerOptions<T>, deps: ControllerDeps) {
    this.name = options.name;
    this.#options = options;
    this.#deps = deps;
    this.#log = deps.log.child({ controller: options.name });
    this.queue = new WorkQueue({
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
      observer: deps.metrics.queueObserver(options.name),
    });
    this.#reader = cacheReader(deps.cache);
    this.#wireEventSources();
  }

  #wireEventSources(): void {
    const { cache } = this.#deps;
    const primary = cache.informer(this.#options.for);
    this.#listen(primary, this.#options.predicates ?? [], (obj) => [keyOf(obj)]);

    const primaryGroup = groupOf(this.#options.for);
    for (const owned of this.#options.owns ?? []) {
      this.#listen(cache.informer(owned), [], (obj) => {
        const owner = obj.metadata?.ownerReferences?.find(
          (ref) => ref.controller && ref.kind === this.#options.for.kind && groupOf(ref) === primaryGroup,
        );
        if (!owner) return [];
        return [
          keyOf(
            this.#options.for.namespaced
              ? { namespace: obj.metadata?.namespace ?? '', name: owner.name }
              : { name: owner.name },
          ),
        ];
      });
    }
    for (const spec of this.#options.watches ?? []) {
      const selectors = {
        ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
        ...(spec.fieldSelector ? { fieldSelector: spec.fieldSelector } : {}),
      };
      this.#listen(cache.informer(spec.type, selectors), spec.predicates ?? [], (obj) =>
        spec.map(obj).map(keyOf),
      );
    }
  }

  #listen<U extends KubeObject>(
    informer: Informer<U>,
    predicates: Predicate<U>[],
    toKeys: (obj: U) => string[],
  ): void {
    const handle = (event: ChangeEvent<U>) => {
      if (!predicates.every((p) => p(event))) return;
      for (const key of toKeys(event.obj)) this.queue.add(key);
    };
    informer.addListener({
      onAdd: (obj) => handle({ type: 'add', obj }),
      onUpdate: (old, obj) => {
        handle({ type: 'update', obj, old });
        // An owned object can move to another owner: the old owner must hear of it too.
        if (old !== obj) handle({ type: 'update', obj: old, old });
      },
      onDelete: (obj) => handle({ type: 'delete', obj }),
    });
  }

  /** Starts the workers. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    const workers = this.#options.maxConcurrentReconciles ?? 1;
    this.#deps.metrics.maxConcurrent.set({ controller: this.name }, workers);
    for (let i = 0; i < workers; i++) this.#workers.push(this.#work());
  }

  /** Enqueues a key by hand (tests, or a reconcile of another controller). */
  enqueue(key: ObjectKey): void {
    this.queue.add(keyOf(key));
  }

  /** Stops taking work; lets in-flight reconciles finish within `timeoutMs`, then aborts them. */
  async stop(timeoutMs = 30_000): Promise<boolean> {
    if (!this.#running) return true;
    const drained = await this.queue.shutDownWithDrain(timeoutMs);
    if (!drained) {
      this.#log.warn(
        { timeoutMs, inFlight: this.queue.inFlight },
        'shutdown deadline passed with reconciles in flight; aborting them',
      );
      this.#abort.abort();
    }
    await Promise.race([Promise.all(this.#workers), new Promise((r) => setTimeout(r, 1000))]);
    this.#running = false;
    return drained;
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      await this.#reconcileKey(key);
      this.queue.done(key);
    }
  }

  async #reconcileKey(key: string): Promise<void> {
    const { metrics } = this.#deps;
    const request = parseKey(key);
    const reconcileId = randomUUID();
    const log = this.#log.child({
      namespace: request.namespace,
      name: request.name,
      reconcileID: reconcileId,
    });
    const labels = { controller: this.name };
    metrics.activeWorkers.inc(labels);
    const timer = metrics.reconcileTime.startTimer(labels);
    try {
      const result = await this.#options.reconcile(request, {
        log,
        client: this.#deps.client,
        events: this.#deps.events,
        cache: this.#reader,
        signal: this.#abort.signal,
        reconcileId,
      });
      if (result?.requeueAfterMs !== undefined) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfterMs);
        metrics.reconcileTotal.inc({ ...labels, result: 'requeue_after' });
      } else if (result?.requeue) {
        this.queue.addRateLimited(key);
        metrics.reconcileTotal.inc({ ...labels, result: 'requeue' });
      } else {
        this.queue.forget(key);
        metrics.reconcileTotal.inc({ ...labels, result: 'success' });
      }
    } catch (error) {
      this.queue.addRateLimited(key);
      metrics.reconcileTotal.inc({ ...labels, result: 'error' });
      metrics.reconcileErrors.inc(labels);
      log.error({ err: error, retries: this.queue.retries(key) }, 'reconcile failed; retrying with backoff');
    } finally {
      timer();
      metrics.activeWorkers.dec(labels);
    }
  }
}

function cacheReader(cache: InformerCache): CacheReader {
  return {
    get: (type, name, namespace) => cache.informer(type).store.get(namespace ? `${namespace}/${name}` : name),
    list: (type, namespace) => {
      const store = cache.informer(type).store;
      return namespace ? store.byIndex('namespace', namespace) : store.list();
    },
    ownedBy: (type, ownerUid) => cache.informer(type).store.byIndex('ownerUid', ownerUid),
  };
}
