import type { Logger } from 'pino';
import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject, ResourceType } from '../client/resource-type.ts';
import { Reflector, type ReflectorOptions, type ReflectorStats } from './reflector.ts';
import { Store, type IndexFunction, type StoreListener } from './store.ts';

export interface InformerOptions extends Omit<ReflectorOptions, 'namespace'> {
  /** Namespaces to watch; empty or undefined watches all (cluster-scoped kinds ignore this). */
  namespaces?: readonly string[];
  /** Tell listeners about every object again this often (0 = never). Default 0. */
  resyncPeriodMs?: number;
}

/**
 * One kind's cache: a Store kept current by one reflector per watched namespace (or one for all),
 * with listeners for changes. Shared by every controller that reads the kind.
 */
export class Informer<T extends KubeObject> {
  readonly type: ResourceType<T>;
  readonly store = new Store<T>();
  readonly reflectors: Reflector<T>[];
  readonly #options: InformerOptions;
  #abort: AbortController | undefined;
  #runs: Promise<void>[] = [];
  #resync: NodeJS.Timeout | undefined;

  constructor(client: KubeClient, type: ResourceType<T>, log: Logger, options: InformerOptions = {}) {
    this.type = type;
    this.#options = options;
    const namespaces = type.namespaced && options.namespaces?.length ? options.namespaces : [undefined];
    const reflectorOptions: ReflectorOptions = { ...options };
    delete (reflectorOptions as InformerOptions).namespaces;
    delete (reflectorOptions as InformerOptions).resyncPeriodMs;
    this.reflectors = namespaces.map(
      (namespace) =>
        new Reflector(client, type, this.store, log, {
          ...reflectorOptions,
          ...(namespace ? { namespace } : {}),
        }),
    );
  }

  /** Subscribes to adds, updates and deletes. */
  addListener(listener: StoreListener<T>): void {
    this.store.listen(listener);
  }

  /** Adds a named index to the store. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    this.store.addIndex(name, fn);
  }

  /** Starts the reflectors (idempotent). */
  start(): void {
    if (this.#abort) return;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    this.#runs = this.reflectors.map((r) => r.run(signal));
    if (this.#options.resyncPeriodMs) {
      this.#resync = setInterval(() => this.store.resync(), this.#options.resyncPeriodMs);
    }
  }

  /** True once every reflector has stored its first list. */
  get synced(): boolean {
    return this.reflectors.every((r) => r.synced);
  }

  /** Resolves once every reflector has stored its first list. */
  async waitForSync(): Promise<void> {
    await Promise.all(this.reflectors.map((r) => r.waitForSync()));
  }

  /** Sum of the reflectors' counters. */
  stats(): Omit<ReflectorStats, 'resourceVersion' | 'lastError'> {
    const total = { lists: 0, watches: 0, relistsAfterGone: 0, idleTimeouts: 0, errors: 0 };
    for (const r of this.reflectors) {
      for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += r.stats[k];
    }
    return total;
  }

  /** Stops the reflectors and waits for them to end. */
  async stop(): Promise<void> {
    this.#abort?.abort();
    clearInterval(this.#resync);
    await Promise.all(this.#runs);
    this.#abort = undefined;
  }
}
