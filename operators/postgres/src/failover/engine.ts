// FailoverEngine: the step-wise engine (decide.ts, perform.ts, drive.ts) behind a probing loop and
// the failover() / switchover() calls the tests and the benchmark use. Its state lives in a
// FailoverStateStore: in memory by default, or anywhere durable, so that a new engine given the
// same store finishes what a stopped one started.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Fencing, InstanceActions, Routing } from './actions.ts';
import { clusterView, type ClusterView } from './cluster-view.ts';
import { defaultPolicy, type FailoverPolicy } from './decide.ts';
import { runSteps, observeAll, type StepRunResult } from './drive.ts';
import {
  memoryStateStore,
  settledState,
  type FailoverState,
  type FailoverStateStore,
} from './failover-state.ts';
import {
  defaultConnectOptions,
  errorMessage,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from '../instance/instance.ts';
import type { Lsn } from '../instance/lsn.ts';
import { observeInstance, type InstanceStatus } from '../instance/observe.ts';
import type { EngineEvent, EngineOutcome, Refusal, RefusalCode } from './outcomes.ts';
import type { EngineWorld } from './perform.ts';
import type { SynchronousReplication } from '../instance/synchronous.ts';

export type { EngineEvent, EngineOutcome, Promotion, Refusal, RefusalCode } from './outcomes.ts';

export interface FailoverEngineOptions {
  readonly instances: readonly InstanceEndpoint[];
  /** The instance that is the primary when the engine starts (ignored when `store` is given). */
  readonly primary: string;
  /** Where the state is kept between steps; default: in memory, starting settled on `primary`. */
  readonly store?: FailoverStateStore;
  readonly credentials: Credentials;
  readonly fencing: Fencing;
  readonly routing: Routing;
  readonly actions: InstanceActions;
  /** How long the primary must stay unreachable before a failover starts (default 2000 ms). */
  readonly failoverDelayMs?: number;
  /** How often `start()` probes (default 500 ms). */
  readonly probeIntervalMs?: number;
  /** A replica whose replayed WAL is further than this behind is never promoted (default 16 MiB). */
  readonly maxLagBytes?: bigint;
  readonly synchronous?: SynchronousReplication;
  readonly connect?: ConnectOptions;
  /** How long a failover waits for the replicas' WAL receivers to let go of the fenced primary. */
  readonly walReceiverStopTimeoutMs?: number;
  /** How long a switchover waits for its target to receive the demoted primary's last WAL. */
  readonly switchoverCatchUpTimeoutMs?: number;
  /** See FailoverPolicy; default 0 (no self-fencing in this world). */
  readonly isolatedPrimaryStopsWithinMs?: number;
  readonly onEvent?: (event: EngineEvent) => void;
}

/**
 * Watches the primary, fails over when it is gone, performs planned switchovers and keeps
 * synchronous_standby_names and the replicas' upstream in line. One run of steps at a time.
 */
export class FailoverEngine {
  readonly #o: FailoverEngineOptions;
  readonly #world: EngineWorld;
  readonly #policy: FailoverPolicy;
  readonly #store: FailoverStateStore;
  #state: FailoverState;
  #lastPrimaryLsn: Lsn | undefined;
  #busy = false;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #lastRefusal = '';
  /** The 'still-read-only' message of the previous run, and of this one: reported once while it lasts. */
  #lastNotice: string | undefined;
  #notice: string | undefined;

  constructor(options: FailoverEngineOptions) {
    const names = new Set(options.instances.map((i) => i.name));
    if (names.size !== options.instances.length) throw new Error('instance names must be unique');
    if (!names.has(options.primary))
      throw new Error(`primary '${options.primary}' is not one of the instances`);
    const sync = options.synchronous;
    if (sync && (!Number.isInteger(sync.number) || sync.number < 1 || sync.number > names.size - 1)) {
      throw new Error(`synchronous.number must be between 1 and ${names.size - 1} (the number of replicas)`);
    }
    this.#o = options;
    this.#state = settledState(options.primary);
    const store = options.store ?? memoryStateStore(this.#state);
    // Every saved step is visible through `primary` at once, not only when a run ends.
    this.#store = {
      load: async () => (this.#state = await store.load()),
      save: async (state) => {
        await store.save(state);
        this.#state = state;
      },
    };
    this.#policy = {
      failoverDelayMs: options.failoverDelayMs ?? defaultPolicy.failoverDelayMs,
      maxLagBytes: options.maxLagBytes ?? defaultPolicy.maxLagBytes,
      walReceiverStopTimeoutMs: options.walReceiverStopTimeoutMs ?? defaultPolicy.walReceiverStopTimeoutMs,
      switchoverCatchUpTimeoutMs:
        options.switchoverCatchUpTimeoutMs ?? defaultPolicy.switchoverCatchUpTimeoutMs,
      isolatedPrimaryStopsWithinMs:
        options.isolatedPrimaryStopsWithinMs ?? defaultPolicy.isolatedPrimaryStopsWithinMs,
      silentReceiverMs: defaultPolicy.silentReceiverMs,
      electionTimeoutMs: defaultPolicy.electionTimeoutMs,
      reinstateTimeoutMs: defaultPolicy.reinstateTimeoutMs,
      reloadSettleMs: defaultPolicy.reloadSettleMs,
      ...(options.synchronous ? { synchronous: options.synchronous } : {}),
    };
    this.#world = {
      instances: options.instances,
      credentials: options.credentials,
      connect: options.connect ?? defaultConnectOptions,
      fencing: options.fencing,
      routing: options.routing,
      actions: options.actions,
      emit: (event) => this.#emit(event),
    };
  }

  /** The instance writes are routed to, as of the last step (the store's, once a step has run). */
  get primary(): string {
    return this.#state.currentPrimary;
  }

  /** The state as of the last step. */
  get state(): FailoverState {
    return this.#state;
  }

  /** Observes every instance once, in parallel. */
  observe(): Promise<InstanceStatus[]> {
    return observeAll(this.#world);
  }

  /** The whole cluster at once: role, timeline, LSNs, lag and synchronous state of each instance. */
  async observeCluster(): Promise<ClusterView> {
    return clusterView(await this.observe());
  }

  /** Probes continuously until `stop()`; each probe is one `tick()`. */
  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#loop = (async () => {
      while (!this.#stopping) {
        try {
          await this.tick();
        } catch (error) {
          this.#emit({ type: 'warning', message: `probe failed: ${errorMessage(error)}` });
        }
        await sleep(this.#o.probeIntervalMs ?? 500);
      }
    })();
  }

  /** Stops probing; resolves once the current step has finished. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#loop;
    this.#loop = undefined;
  }

  /**
   * One probe: a healthy primary gets its synchronous standbys and its replicas re-checked; a
   * primary that has failed for longer than the failover delay is failed over; an operation found
   * in the state (left by an engine that stopped) is carried on to its end.
   */
  async tick(): Promise<EngineOutcome | undefined> {
    if (this.#busy) return undefined;
    return (await this.#run({}))?.outcome;
  }

  /** Fails over now (or carries on the failover in progress): fence, elect, promote, route, rejoin. */
  async failover(reason: string): Promise<EngineOutcome> {
    if (this.#busy) return this.#refuse('failover', 'busy', 'another failover or switchover is in progress');
    const result = await this.#run({ failoverNow: reason });
    return (
      result?.outcome ??
      this.#refuse('failover', 'busy', 'the failover did not finish in this run; it goes on')
    );
  }

  /** Planned switchover to `targetName`; refuses, changing nothing, when it would not be safe. */
  async switchover(targetName: string): Promise<EngineOutcome> {
    if (this.#busy || this.#state.operation) {
      return this.#refuse('switchover', 'busy', 'another failover or switchover is in progress');
    }
    const target = this.#o.instances.find((i) => i.name === targetName);
    if (!target) {
      return this.#refuse(
        'switchover',
        'unknown-instance',
        `'${targetName}' is not an instance of this cluster`,
      );
    }
    const old = this.#state.currentPrimary;
    if (targetName === old) {
      return this.#refuse('switchover', 'already-primary', `${targetName} is already the primary`);
    }
    const endpoint = this.#o.instances.find((i) => i.name === old);
    const primary = endpoint
      ? await observeInstance(endpoint, this.#o.credentials, this.#world.connect)
      : undefined;
    if (!primary?.reachable || primary.role !== 'primary') {
      const why = primary?.reachable ? 'is in recovery' : `is unreachable (${primary?.error ?? 'unknown'})`;
      return this.#refuse(
        'switchover',
        'primary-unreachable',
        `the primary ${old} ${why}; a switchover needs a running primary (failover handles a dead one)`,
      );
    }
    const result = await this.#run({ desiredPrimary: targetName });
    return (
      result?.outcome ??
      this.#refuse('switchover', 'busy', 'the switchover did not finish in this run; it goes on')
    );
  }

  async #run(request: { failoverNow?: string; desiredPrimary?: string }): Promise<StepRunResult | undefined> {
    if (this.#busy) return undefined;
    this.#busy = true;
    this.#notice = undefined;
    try {
      const result = await runSteps({
        world: this.#world,
        store: this.#store,
        policy: this.#policy,
        ...request,
        ...(this.#lastPrimaryLsn === undefined ? {} : { lastPrimaryLsn: this.#lastPrimaryLsn }),
      });
      this.#state = result.state;
      this.#lastPrimaryLsn = result.lastPrimaryLsn;
      return result;
    } finally {
      this.#lastNotice = this.#notice;
      this.#busy = false;
    }
  }

  #refuse(kind: 'failover' | 'switchover', code: RefusalCode, reason: string): Refusal {
    this.#emit({ type: 'refused', message: `${kind} refused (${code}): ${reason}` });
    return { outcome: 'refused', kind, code, reason };
  }

  #emit(event: EngineEvent): void {
    // A failover refused on every probe would flood the log with the same line.
    if (event.type === 'refused') {
      if (event.message === this.#lastRefusal) return;
      this.#lastRefusal = event.message;
    }
    // A primary kept read-only by a role setting is found so on every probe: once while it lasts.
    if (event.type === 'still-read-only') {
      this.#notice = event.message;
      if (event.message === this.#lastNotice) return;
    }
    this.#o.onEvent?.(event);
  }
}
