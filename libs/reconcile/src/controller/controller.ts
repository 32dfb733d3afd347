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
import { PermanentError } from '../client/errors.ts';
import type { ChangeEvent, Predicate } from './predicates.ts';
import { WriteBackoff, type Writes } from './write-backoff.ts';

/** What a reconcile asks for next. Returning nothing means "converged, wait for a change". */
export interface ReconcileResult {
  /**
   * Reconcile again after this many milliseconds (resets the backoff); sooner when a write refused
   * earlier (`context.writes`) is due to be tried again.
   */
  requeueAfterMs?: number;
  /** Reconcile again with backoff, without counting an error. */
  requeue?: boolean;
}

/** Which object to converge, and that object as the cache holds it (undefined once deleted). */
export interface ReconcileRequest<T extends KubeObject> extends ObjectKey {
  object: T | undefined;
}

/** Everything a reconcile needs, bound to one request. */
export interface ReconcileContext {
  /** pino child logger bound to controller, namespace, name and reconcileID. */
  log: Logger;
  /** The manager's client; its calls stop when `signal` aborts. */
  client: KubeClient;
  events: EventRecorder;
  /**
   * Writes with a backoff of their own: a refused one is skipped until it is due again, and the
   * key is reconciled again by then, without the key's error backoff (ADR 0603).
   */
  writes: Writes;
  /** Reads from the shared informer caches (never from the API server). */
  cache: CacheReader;
  /** Aborted when the manager shuts down and the drain deadline passes, or leadership is lost. */
  signal: AbortSignal;
  reconcileId: string;
}

/**
 * Reads objects of kinds the manager watches from their shared informers. Reading a kind that no
 * controller watches (nor `manager.cache.informer()` registered before start) throws rather than
 * answering "not found" for an object that may exist.
 */
export interface CacheReader {
  get<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): T | undefined;
  list<T extends KubeObject>(type: ResourceType<T>, namespace?: string): T[];
  /** Objects of `type` whose ownerReferences name `ownerUid`. */
  ownedBy<T extends KubeObject>(type: ResourceType<T>, ownerUid: string): T[];
}

/** Thrown by a CacheReader asked for a kind no informer of the manager has listed. */
export class NotCachedError extends Error {
  constructor(type: ResourceType, why: string) {
    super(
      `${type.kind} (${type.apiVersion}) ${why}: declare it in a controller's owns or watches, or call manager.cache.informer() for it before the manager starts`,
    );
    this.name = 'NotCachedError';
  }
}

// `void` lets a reconcile that has nothing to ask for simply not return anything.
export type Reconcile<T extends KubeObject = KubeObject> = (
  request: ReconcileRequest<T>,
  context: ReconcileContext,
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
) => Promise<ReconcileResult | void>;

/**
 * A reconciler as an object, as controller-runtime's reconcile.Reconciler: what each operator
 * exports, its reconcile a short sequence of named phases (observe, converge the objects, drive the
 * engine, report) over state the object keeps between reconciles. A controller takes either this
 * or a bare function.
 */
export interface Reconciler<T extends KubeObject = KubeObject> {
  reconcile(
    request: ReconcileRequest<T>,
    context: ReconcileContext,
    // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
  ): Promise<ReconcileResult | void>;
}

/** Watch another kind and map its objects to the primary objects to reconcile. */
export interface WatchSpec<U extends KubeObject> {
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

/** A watch of some kind, ready for `ControllerOptions.watches` (made by `watch()`). */
export interface Watch {
  readonly type: ResourceType;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  /** Runs the predicates on the real change, then maps the new object and (on updates) the old one. */
  readonly keysFor: (event: ChangeEvent<KubeObject>) => ObjectKey[];
}

/** Declares a watch of another kind, typed by that kind, for `ControllerOptions.watches`. */
export function watch<U extends KubeObject>(spec: WatchSpec<U>): Watch {
  const predicates = spec.predicates ?? [];
  return {
    type: spec.type,
    labelSelector: spec.labelSelector,
    fieldSelector: spec.fieldSelector,
    // The informer for spec.type only ever delivers objects of that kind.
    keysFor: (event) => mappedKeys(event as ChangeEvent<U>, predicates, spec.map),
  };
}

/**
 * Filters a change once, on the real (old, new) pair, then maps both objects: an update that
 * moves an object from one owner to another (a relabel) must reach the old owner too, as
 * controller-runtime's mapped handler does.
 */
export function mappedKeys<U extends KubeObject>(
  event: ChangeEvent<U>,
  predicates: readonly Predicate<U>[],
  map: (obj: U) => ObjectKey[],
): ObjectKey[] {
  if (!predicates.every((p) => p(event))) return [];
  const keys = map(event.obj);
  if (event.type === 'update' && event.old && event.old !== event.obj) keys.push(...map(event.old));
  return keys;
}

export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in logs, metrics and the queue. */
  name: string;
  /** The primary kind: its changes enqueue itself. */
  for: ResourceType<T>;
  /** Owned kinds: a change to one enqueues its controller owner of the primary kind. */
  owns?: readonly ResourceType[];
  /** Other kinds, mapped to primary keys by a function (each made with `watch()`). */
  watches?: readonly Watch[];
  /** Filters for the primary kind's changes (all must pass). */
  predicates?: Predicate<T>[];
  /** Reconciles running at once, never two for one key. Default 1. */
  maxConcurrentReconciles?: number;
  /**
   * A reconcile still running after this long is logged as a warning with its key, and again each
   * such period while it runs: a reconcile that hangs (a call without a deadline) holds its key
   * and would otherwise leave no trace. Default 60 s.
   */
  slowReconcileWarningMs?: number;
  rateLimiter?: RateLimiter;
  reconcile: Reconcile<T> | Reconciler<T>;
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
 * it; it never crashes the process. A write refused through `context.writes` backs off alone.
 */
export class Controller<T extends KubeObject> {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #options: ControllerOptions<T>;
  readonly #reconcile: Reconcile<T>;
  readonly #deps: ControllerDeps;
  readonly #log: Logger;
  readonly #reader: CacheReader;
  readonly #client: KubeClient;
  readonly #events: EventRecorder;
  readonly #writes = new WriteBackoff();
  #workers: Promise<void>[] = [];
  #abort = new AbortController();
  #running = false;

  constructor(options: ControllerOptions<T>, deps: ControllerDeps) {
    this.name = options.name;
    this.#options = options;
    const { reconcile } = options;
    this.#reconcile = typeof reconcile === 'function' ? reconcile : (r, c) => reconcile.reconcile(r, c);
    this.#deps = deps;
    this.#log = deps.log.child({ controller: options.name });
    this.queue = new WorkQueue({
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
      observer: deps.metrics.queueObserver(options.name),
    });
    this.#reader = cacheReader(deps.cache);
    // Every call a reconcile makes stops when the controller aborts (shutdown past its deadline,
    // or lost leadership).
    this.#client = deps.client.withSignal(this.#abort.signal);
    this.#events = deps.events.withSignal(this.#abort.signal);
    this.#wireEventSources();
  }

  #wireEventSources(): void {
    const { cache } = this.#deps;
    const primary = cache.informer(this.#options.for);
    const primaryPredicates = this.#options.predicates ?? [];
    this.#listen(primary, (event) => mappedKeys(event, primaryPredicates, (obj) => [keyOfObject(obj)]));

    const primaryGroup = groupOf(this.#options.for);
    const ownerKey = (obj: KubeObject): ObjectKey[] => {
      const owner = obj.metadata?.ownerReferences?.find(
        (ref) => ref.controller && ref.kind === this.#options.for.kind && groupOf(ref) === primaryGroup,
      );
      if (!owner) return [];
      return [
        this.#options.for.namespaced
          ? { namespace: obj.metadata?.namespace ?? '', name: owner.name }
          : { name: owner.name },
      ];
    };
    for (const owned of this.#options.owns ?? []) {
      // An owned object can move to another owner: mappedKeys maps the old object too.
      this.#listen(cache.informer(owned), (event) => mappedKeys(event, [], ownerKey));
    }
    for (const spec of this.#options.watches ?? []) {
      const selectors = {
        ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
        ...(spec.fieldSelector ? { fieldSelector: spec.fieldSelector } : {}),
      };
      this.#listen(cache.informer(spec.type, selectors), spec.keysFor);
    }
  }

  #listen<U extends KubeObject>(
    informer: Informer<U>,
    keysFor: (event: ChangeEvent<U>) => ObjectKey[],
  ): void {
    const handle = (event: ChangeEvent<U>) => {
      for (const key of keysFor(event)) this.queue.add(keyOf(key));
    };
    informer.addListener({
      onAdd: (obj) => handle({ type: 'add', obj }),
      onUpdate: (old, obj) => handle({ type: 'update', obj, old }),
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

  /**
   * Stops at once: in-flight reconciles are aborted (their client calls with them) and no new one
   * starts. For a replica that lost its lease, which must not write after another has taken over.
   */
  async abortNow(): Promise<void> {
    if (!this.#running) return;
    this.#abort.abort();
    const drained = this.queue.shutDownWithDrain(0);
    await Promise.race([Promise.all(this.#workers), new Promise((r) => setTimeout(r, 1000))]);
    await drained;
    this.#running = false;
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      if (this.#abort.signal.aborted) {
        // Aborted (lost leadership, or the drain deadline passed): start nothing new.
        this.queue.done(key);
        return;
      }
      await this.#reconcileKey(key);
      this.queue.done(key);
    }
  }

  async #reconcileKey(key: string): Promise<void> {
    const { metrics } = this.#deps;
    const request = parseKey(key);
    const reconcileId = randomUUID();
    // A pino child serialises its bindings when made: most reconciles never log, so make it on
    // first use (a measurable share of a reconcile's CPU without a JIT).
    let child: Logger | undefined;
    const logger = () =>
      (child ??= this.#log.child({
        namespace: request.namespace,
        name: request.name,
        reconcileID: reconcileId,
      }));
    const labels = { controller: this.name };
    metrics.activeWorkers.inc(labels);
    const timer = metrics.reconcileTime.startTimer(labels);
    const object = this.#deps.cache.informer(this.#options.for).store.get(key);
    // A refused write is not thrown to here, so it is logged where it is refused.
    const writes = this.#writes.begin(key, object?.metadata?.generation, (failure, retryInMs) =>
      logger().warn({ err: failure, retryInMs }, 'write refused; sending it again after its own backoff'),
    );
    const started = performance.now();
    const watchdog = setInterval(
      () =>
        logger().warn({ runningForMs: Math.round(performance.now() - started) }, 'reconcile still running'),
      this.#options.slowReconcileWarningMs ?? 60_000,
    );
    watchdog.unref();
    try {
      const result = await this.#reconcile(
        { ...request, object },
        {
          get log() {
            return logger();
          },
          client: this.#client,
          events: this.#events,
          writes,
          cache: this.#reader,
          signal: this.#abort.signal,
          reconcileId,
        },
      );
      writes.finish();
      if (!object) this.#writes.forget(key);
      // A refused write comes back when its own backoff ends, not with the key's error backoff.
      const writeDueMs = this.#writes.nextDueMs(key);
      if (result?.requeueAfterMs !== undefined) {
        this.queue.forget(key);
        this.queue.addAfter(key, Math.min(result.requeueAfterMs, writeDueMs ?? Infinity));
        metrics.reconcileTotal.inc({ ...labels, result: 'requeue_after' });
      } else if (result?.requeue) {
        this.queue.addRateLimited(key);
        metrics.reconcileTotal.inc({ ...labels, result: 'requeue' });
      } else {
        this.queue.forget(key);
        if (writeDueMs !== undefined) this.queue.addAfter(key, writeDueMs);
        metrics.reconcileTotal.inc({ ...labels, result: 'success' });
      }
    } catch (error) {
      metrics.reconcileTotal.inc({ ...labels, result: 'error' });
      metrics.reconcileErrors.inc(labels);
      if (error instanceof PermanentError) {
        // Retrying cannot fix it: say so once, where the user looks, and wait for a change.
        this.queue.forget(key);
        logger().error({ err: error, reason: error.reason }, 'reconcile failed permanently; not retrying');
        const current = this.#deps.cache.informer(this.#options.for).store.get(key);
        if (current) await this.#events.warning(current, error.reason, 'Reconcile', error.message);
      } else {
        this.queue.addRateLimited(key);
        logger().error(
          { err: error, retries: this.queue.retries(key) },
          'reconcile failed; retrying with backoff',
        );
      }
    } finally {
      clearInterval(watchdog);
      timer();
      metrics.activeWorkers.dec(labels);
    }
  }
}

function cacheReader(cache: InformerCache): CacheReader {
  // Only informers made before the manager started (by a controller or by hand) are read: one
  // made here would answer "not found" until its first list arrives.
  const storeOf = <T extends KubeObject>(type: ResourceType<T>) => {
    const informer = cache.existing(type);
    if (!informer) {
      throw new NotCachedError(
        type,
        cache.watches(type)
          ? "is cached only through a label or field selector (read that informer's store)"
          : 'is not watched by this manager',
      );
    }
    if (!informer.synced) throw new NotCachedError(type, 'is not synced yet');
    return informer.store;
  };
  return {
    get: (type, name, namespace) => storeOf(type).get(namespace ? `${namespace}/${name}` : name),
    list: (type, namespace) => {
      const store = storeOf(type);
      return namespace ? store.byIndex('namespace', namespace) : store.list();
    },
    ownedBy: (type, ownerUid) => storeOf(type).byIndex('ownerUid', ownerUid),
  };
}

function keyOfObject(obj: KubeObject): ObjectKey {
  return parseKey(keyOf(obj));
}
