import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { ClusterSource } from '../client/cluster-access.ts';
import { KubeClient } from '../client/kube-client.ts';
import { keepOwnManagedFields } from '../helpers/applied-state.ts';
import type { KubeObject } from '../client/resource-type.ts';
import { InformerCache } from '../cache/informer-cache.ts';
import { Controller, type ControllerOptions } from '../controller/controller.ts';
import { EventRecorder } from '../events/event-recorder.ts';
import { ControllerMetrics } from '../metrics/controller-metrics.ts';
import { ProbeServer } from './health-server.ts';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.ts';

export interface ManagerOptions {
  /** Where the API server is: `await loadKubeConfig()` (or a client-node KubeConfig). */
  kubeConfig: ClusterSource;
  /** The operator's name: server-side apply field manager, event reporter, log name. */
  name: string;
  /**
   * Further field managers this operator server-side applies with (a secondary client:
   * `manager.client.withOptions({ fieldManager })`): cached objects keep their managedFields
   * entries as well as `name`'s, so `applyIfChanged` of those clients sees removed fields too.
   */
  fieldManagers?: readonly string[];
  /** Watch only these namespaces; empty or undefined watches all. */
  namespaces?: readonly string[];
  /** Lease-based leader election; off when undefined. */
  leaderElection?: Omit<LeaderElectionOptions, 'identity'> & { identity?: string };
  /** Port for /healthz and /readyz (0 picks a free one; undefined disables). Default undefined. */
  healthPort?: number;
  /** Port for /metrics (0 picks a free one; undefined disables). Default undefined. */
  metricsPort?: number;
  /** Address the probe and metrics servers bind to. Default 0.0.0.0. */
  bindAddress?: string;
  /** Defaults to pino JSON on stdout at `info`. */
  logger?: Logger;
  /** How long stop() lets in-flight reconciles finish. Default 30 s. */
  shutdownTimeoutMs?: number;
  /** Tell controllers about every cached object again this often (0 = never). Default 0. */
  resyncPeriodMs?: number;
  /** Reflector idle timeout (see ReflectorOptions.idleTimeoutMs). */
  watchIdleTimeoutMs?: number;
  /**
   * Called when leadership is lost, after every controller has been stopped (in-flight reconciles
   * aborted). Default: stop the manager and set process.exitCode = 1.
   */
  onLostLeadership?: () => void;
}

/**
 * Runs an operator: one client, shared informer caches, the controllers, leader election, probes,
 * metrics and graceful shutdown. Caches start (and readiness follows them) on every replica;
 * controllers run only on the leader.
 */
export class Manager {
  readonly log: Logger;
  readonly client: KubeClient;
  readonly cache: InformerCache;
  readonly metrics = new ControllerMetrics();
  readonly events: EventRecorder;
  readonly identity: string;
  readonly #options: ManagerOptions;
  readonly #controllers: Controller<KubeObject>[] = [];
  readonly #elector: LeaderElector | undefined;
  readonly #servers: { kind: 'health' | 'metrics'; server: ProbeServer }[] = [];
  #abort = new AbortController();
  #election: Promise<void> | undefined;
  #state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  #stopped: Promise<void> | undefined;
  #whenStopped: ((error?: unknown) => void) | undefined;
  #electedResolve!: () => void;
  /** Resolves when this replica starts leading (at once without leader election). */
  readonly elected = new Promise<void>((resolve) => (this.#electedResolve = resolve));

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.log = options.logger ?? pino({ name: options.name });
    this.identity = options.leaderElection?.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.client = new KubeClient(options.kubeConfig, { fieldManager: options.name });
    this.client.transport.onRequest((method, _path, code) =>
      this.metrics.restRequests.inc({ method, code: String(code) }),
    );
    this.cache = new InformerCache(this.client, this.log, {
      // Cached objects keep only this operator's own managedFields entries: what applyIfChanged reads.
      transform: keepOwnManagedFields([options.name, ...(options.fieldManagers ?? [])]),
      ...(options.namespaces?.length ? { namespaces: options.namespaces } : {}),
      ...(options.resyncPeriodMs ? { resyncPeriodMs: options.resyncPeriodMs } : {}),
      ...(options.watchIdleTimeoutMs ? { idleTimeoutMs: options.watchIdleTimeoutMs } : {}),
    });
    this.events = new EventRecorder(this.client, options.name, this.identity, this.log);
    if (options.leaderElection) {
      this.#elector = new LeaderElector(
        this.client,
        { ...options.leaderElection, identity: this.identity },
        this.log,
      );
    }
  }

  /** Adds a controller; its informers are shared with every other controller of this manager. */
  controller<T extends KubeObject>(options: ControllerOptions<T>): Controller<T> {
    if (this.#state !== 'new') throw new Error(`add controller ${options.name} before starting the manager`);
    const controller = new Controller(options, {
      client: this.client,
      cache: this.cache,
      events: this.events,
      metrics: this.metrics,
      log: this.log,
    });
    this.#controllers.push(controller as unknown as Controller<KubeObject>);
    return controller;
  }

  /** The controller added under `name`, if any. */
  controllerNamed(name: string): Controller<KubeObject> | undefined {
    return this.#controllers.find((c) => c.name === name);
  }

  /** True while this replica holds the lease (always true without leader election). */
  get isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader : this.#state === 'running';
  }

  /** Why the manager is not ready, or undefined when every cache has synced. */
  notReadyReason(): string | undefined {
    if (this.#state !== 'running') return `manager is ${this.#state}`;
    const pending = this.cache
      .all()
      .filter((i) => !i.synced)
      .map((i) => i.type.kind);
    return pending.length ? `caches not synced: ${pending.join(', ')}` : undefined;
  }

  /** Port of the probe server, when enabled. */
  get healthPort(): number | undefined {
    return this.#servers.find((s) => s.kind === 'health')?.server.port;
  }

  /** Port of the metrics server, when enabled. */
  get metricsPort(): number | undefined {
    return this.#servers.find((s) => s.kind === 'metrics')?.server.port;
  }

  /**
   * Starts probes, metrics and caches, waits for the caches to sync, then runs the controllers
   * (after winning the lease when leader election is on). Resolves once the caches have synced.
   */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`manager ${this.#options.name} was already started`);
    this.#state = 'running';
    const bind = this.#options.bindAddress ?? '0.0.0.0';
    if (this.#options.healthPort !== undefined) {
      const server = new ProbeServer(
        this.#options.healthPort,
        { healthz: () => this.#healthProblem(), readyz: () => this.notReadyReason() },
        bind,
      );
      this.#servers.push({ kind: 'health', server });
    }
    if (this.#options.metricsPort !== undefined) {
      const server = new ProbeServer(this.#options.metricsPort, { metrics: this.metrics.registry }, bind);
      this.#servers.push({ kind: 'metrics', server });
    }
    await Promise.all(this.#servers.map((s) => s.server.listen()));
    this.cache.start();
    await this.cache.waitForSync();
    this.log.info(
      { controllers: this.#controllers.map((c) => c.name), identity: this.identity },
      'caches synced',
    );
    const runControllers = () => {
      this.metrics.leaderStatus.set({ name: this.#options.name }, 1);
      for (const c of this.#controllers) c.start();
      this.#electedResolve();
    };
    if (!this.#elector) {
      runControllers();
      return;
    }
    this.#election = this.#elector.run(this.#abort.signal, runControllers, () => {
      this.metrics.leaderStatus.set({ name: this.#options.name }, 0);
      // Another replica may take the lease over once it expires: stop writing now, not after a
      // drain. In-flight reconciles are aborted, their requests with them.
      void Promise.all(this.#controllers.map((c) => c.abortNow())).then(() =>
        (
          this.#options.onLostLeadership ??
          (() => {
            process.exitCode = 1;
            void this.stop();
          })
        )(),
      );
    });
  }

  #healthProblem(): string | undefined {
    return this.#state === 'running' || this.#state === 'stopping' ? undefined : `manager is ${this.#state}`;
  }

  /**
   * Graceful shutdown: stop handing out work, let in-flight reconciles finish (bounded by
   * shutdownTimeoutMs), release the lease, stop the caches and close the servers. Idempotent.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop().then(
      () => this.#whenStopped?.(),
      (error: unknown) => {
        this.log.error({ err: error }, 'stopping failed');
        if (!this.#whenStopped) throw error;
        this.#whenStopped(error);
      },
    );
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    if (this.#state === 'new') {
      this.#state = 'stopped';
      return;
    }
    this.#state = 'stopping';
    this.log.info('shutting down: draining in-flight reconciles');
    const timeout = this.#options.shutdownTimeoutMs ?? 30_000;
    await Promise.all(this.#controllers.map((c) => c.stop(timeout)));
    this.#abort.abort();
    await this.#election;
    await this.#elector?.release();
    this.metrics.leaderStatus.set({ name: this.#options.name }, 0);
    await this.cache.stop();
    // Events are written in the background: send what the last reconciles recorded.
    if (!(await this.events.flush(5_000))) this.log.warn('events still unwritten at shutdown');
    await Promise.all(this.#servers.map((s) => s.server.close()));
    this.client.close();
    this.#state = 'stopped';
    this.log.info('stopped');
  }

  /**
   * Calls `then` once the manager has stopped, whatever stopped it (a signal, lost leadership, a
   * caller), with the stop's error if it failed. An operator process ends there (runOperator).
   */
  whenStopped(then: (error?: unknown) => void): void {
    this.#whenStopped = then;
  }

  /** Stops the manager on SIGTERM or SIGINT (what Kubernetes sends before killing a pod). */
  stopOnSignals(): void {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        this.log.info({ signal }, 'signal received');
        void this.stop();
      });
    }
  }
}
