import type { Fencing, InstanceActions, Routing } from './actions.ts';
import { clusterView, type ClusterView } from './cluster-view.ts';
import { chooseFailoverCandidate, type CandidateVerdict } from './candidate.ts';
import {
  alterSystem,
  ensureSlots,
  promote,
  quiesceWrites,
  repointStandby,
  type ControlTarget,
} from './control.ts';
import {
  defaultConnectOptions,
  errorMessage,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from './instance.ts';
import { formatLsn, type Lsn } from './lsn.ts';
import { observeInstance, type InstanceStatus, type PrimaryStatus, type ReplicaStatus } from './observe.ts';
import { desiredSynchronousStandbyNames, type SynchronousReplication } from './synchronous.ts';

export interface FailoverEngineOptions {
  readonly instances: readonly InstanceEndpoint[];
  /** The instance that is the primary when the engine starts. */
  readonly primary: string;
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
  readonly onEvent?: (event: EngineEvent) => void;
}

/** Something the engine did or saw, for logs, Kubernetes Events and tests. */
export interface EngineEvent {
  readonly type:
    | 'primary-failing'
    | 'failover-started'
    | 'fenced'
    | 'candidates'
    | 'promoted'
    | 'repointed'
    | 'routed'
    | 'rejoin-requested'
    | 'synchronous-standbys'
    | 'refused'
    | 'warning';
  readonly instance?: string;
  readonly message: string;
}

export type RefusalCode =
  | 'busy'
  | 'unknown-instance'
  | 'already-primary'
  | 'primary-unreachable'
  | 'target-unreachable'
  | 'target-not-replica'
  | 'target-not-streaming'
  | 'target-lagging'
  | 'target-did-not-catch-up'
  | 'demotion-failed'
  | 'fence-failed'
  | 'old-primary-still-streaming'
  | 'no-eligible-replica'
  | 'second-primary'
  | 'promotion-failed';

/** A promotion that happened. */
export interface Promotion {
  readonly outcome: 'promoted';
  readonly kind: 'failover' | 'switchover';
  readonly oldPrimary: string;
  readonly newPrimary: string;
  readonly timeline: number | undefined;
  readonly verdicts: readonly CandidateVerdict[];
  readonly durationMs: number;
  /** 'requested', or why the old primary could not be asked to rejoin. */
  readonly rejoin: string;
}

/** A request the engine turned down, or an operation it abandoned before promoting anything. */
export interface Refusal {
  readonly outcome: 'refused';
  readonly kind: 'failover' | 'switchover';
  readonly code: RefusalCode;
  readonly reason: string;
}

export type EngineOutcome = Promotion | Refusal;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Watches the primary, fails over when it is gone, performs planned switchovers and keeps
 * synchronous_standby_names and the replicas' upstream in line. One operation at a time.
 */
export class FailoverEngine {
  readonly #o: FailoverEngineOptions;
  readonly #connect: ConnectOptions;
  readonly #maxLag: bigint;
  #primary: string;
  #lastPrimaryLsn: Lsn | undefined;
  #failingSince: number | undefined;
  #busy = false;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #lastRefusal = '';

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
    this.#connect = options.connect ?? defaultConnectOptions;
    this.#maxLag = options.maxLagBytes ?? 16n * 1024n * 1024n;
    this.#primary = options.primary;
  }

  /** The instance the engine currently routes writes to. */
  get primary(): string {
    return this.#primary;
  }

  /** Observes every instance once, in parallel. */
  async observe(): Promise<InstanceStatus[]> {
    return Promise.all(this.#o.instances.map((i) => observeInstance(i, this.#o.credentials, this.#connect)));
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
          this.#emit('warning', this.#primary, `probe failed: ${errorMessage(error)}`);
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
   * primary that has failed for longer than the failover delay is failed over.
   */
  async tick(): Promise<EngineOutcome | undefined> {
    if (this.#busy) return undefined;
    const statuses = await this.observe();
    const primary = statuses.find((s) => s.name === this.#primary);
    if (primary?.reachable && primary.role === 'primary') {
      this.#failingSince = undefined;
      this.#lastPrimaryLsn = primary.currentLsn;
      await this.#keepReplicasInLine(primary, statuses);
      return undefined;
    }
    const why =
      !primary || !primary.reachable
        ? `unreachable (${primary?.error ?? 'unknown'})`
        : 'not accepting writes (in recovery)';
    const now = Date.now();
    if (this.#failingSince === undefined) {
      this.#failingSince = now;
      this.#emit('primary-failing', this.#primary, `primary ${this.#primary} is ${why}`);
    }
    const failingFor = now - this.#failingSince;
    if (failingFor < (this.#o.failoverDelayMs ?? 2000)) return undefined;
    return this.failover(`primary ${this.#primary} has been ${why} for ${failingFor} ms`);
  }

  /** Fails over now: withdraw routing, fence the old primary, promote the best replica. */
  async failover(reason: string): Promise<EngineOutcome> {
    if (this.#busy) return this.#refuse('failover', 'busy', 'another failover or switchover is in progress');
    this.#busy = true;
    const started = Date.now();
    try {
      const old = this.#endpoint(this.#primary);
      this.#emit('failover-started', old.name, reason);
      await this.#o.routing.withdrawWrites(old);
      try {
        await this.#o.fencing.fence(old);
      } catch (error) {
        return this.#refuse(
          'failover',
          'fence-failed',
          `could not fence ${old.name}: ${errorMessage(error)}; nothing promoted`,
        );
      }
      this.#emit('fenced', old.name, `${old.name} is fenced`);
      const others = this.#o.instances.filter((i) => i.name !== old.name);
      const statuses = await this.#waitForReceiversToStop(others);
      if (!statuses) {
        return this.#refuse(
          'failover',
          'old-primary-still-streaming',
          `a replica still streams WAL ${this.#o.walReceiverStopTimeoutMs ?? 10_000} ms after ${old.name} was fenced; fencing did not take effect, nothing promoted`,
        );
      }
      const choice = chooseFailoverCandidate(statuses, this.#lastPrimaryLsn, this.#maxLag);
      this.#emit(
        'candidates',
        undefined,
        choice.verdicts
          .map((v) => `${v.name}: ${v.eligible ? 'eligible' : 'not eligible'}, ${v.reason}`)
          .join('; '),
      );
      if (!choice.ok) return this.#refuse('failover', 'no-eligible-replica', choice.reason);
      return await this.#promoteAndRepoint(
        'failover',
        old,
        choice.candidate,
        statuses,
        choice.verdicts,
        started,
      );
    } finally {
      this.#busy = false;
    }
  }

  /** Planned switchover to `targetName`; refuses, changing nothing, when it would not be safe. */
  async switchover(targetName: string): Promise<EngineOutcome> {
    if (this.#busy)
      return this.#refuse('switchover', 'busy', 'another failover or switchover is in progress');
    const target = this.#o.instances.find((i) => i.name === targetName);
    if (!target)
      return this.#refuse(
        'switchover',
        'unknown-instance',
        `'${targetName}' is not an instance of this cluster`,
      );
    if (targetName === this.#primary)
      return this.#refuse('switchover', 'already-primary', `${targetName} is already the primary`);
    this.#busy = true;
    const started = Date.now();
    try {
      const old = this.#endpoint(this.#primary);
      const [primaryStatus, targetStatus] = await Promise.all([
        observeInstance(old, this.#o.credentials, this.#connect),
        observeInstance(target, this.#o.credentials, this.#connect),
      ]);
      if (!primaryStatus.reachable || primaryStatus.role !== 'primary') {
        const why = primaryStatus.reachable ? 'is in recovery' : `is unreachable (${primaryStatus.error})`;
        return this.#refuse(
          'switchover',
          'primary-unreachable',
          `the primary ${old.name} ${why}; a switchover needs a running primary (failover handles a dead one)`,
        );
      }
      const refusal = this.#switchoverTargetProblem(primaryStatus, targetStatus);
      if (refusal) return refusal;

      await this.#o.routing.withdrawWrites(old);
      let lastLsn: Lsn;
      try {
        lastLsn = await quiesceWrites(this.#control(old));
      } catch (error) {
        await this.#undoQuiesce(old);
        return this.#refuse(
          'switchover',
          'demotion-failed',
          `could not stop writes on ${old.name}: ${errorMessage(error)}; switchover abandoned`,
        );
      }
      const caughtUp = await this.#waitForPosition(
        target,
        lastLsn,
        this.#o.switchoverCatchUpTimeoutMs ?? 30_000,
      );
      if (!caughtUp) {
        await this.#undoQuiesce(old);
        return this.#refuse(
          'switchover',
          'target-did-not-catch-up',
          `${target.name} did not receive ${old.name}'s WAL up to ${formatLsn(lastLsn)} in time; ${old.name} stays primary`,
        );
      }
      try {
        await this.#o.actions.stopCleanly(old);
        await this.#o.fencing.fence(old);
      } catch (error) {
        return this.#refuse(
          'switchover',
          'demotion-failed',
          `could not stop ${old.name} cleanly: ${errorMessage(error)}; nothing promoted`,
        );
      }
      this.#emit(
        'fenced',
        old.name,
        `${old.name} stopped cleanly after its last write at ${formatLsn(lastLsn)}`,
      );
      const others = this.#o.instances.filter((i) => i.name !== old.name);
      const statuses = await Promise.all(
        others.map((i) => observeInstance(i, this.#o.credentials, this.#connect)),
      );
      const fresh = statuses.find((s) => s.name === target.name);
      if (!fresh?.reachable || fresh.role !== 'replica') {
        return this.#refuse(
          'switchover',
          'target-unreachable',
          `${target.name} went away during the switchover; the primary ${old.name} is stopped, failover will follow`,
        );
      }
      return await this.#promoteAndRepoint('switchover', old, fresh, statuses, [], started);
    } finally {
      this.#busy = false;
    }
  }

  #switchoverTargetProblem(primary: PrimaryStatus, target: InstanceStatus): Refusal | undefined {
    const name = target.name;
    if (!target.reachable)
      return this.#refuse('switchover', 'target-unreachable', `${name} is unreachable (${target.error})`);
    if (target.role !== 'replica')
      return this.#refuse('switchover', 'target-not-replica', `${name} is not a replica: it accepts writes`);
    if (target.walReceiver?.status !== 'streaming') {
      return this.#refuse(
        'switchover',
        'target-not-streaming',
        `${name} is not streaming from ${primary.name} (WAL receiver: ${target.walReceiver?.status ?? 'not running'})`,
      );
    }
    const replayed = target.replayLsn ?? 0n;
    const lag = primary.currentLsn - replayed;
    if (lag > this.#maxLag) {
      return this.#refuse(
        'switchover',
        'target-lagging',
        `${name} has replayed ${formatLsn(replayed)}, ${lag} bytes behind ${primary.name} at ${formatLsn(primary.currentLsn)} (bound ${this.#maxLag} bytes)`,
      );
    }
    return undefined;
  }

  async #promoteAndRepoint(
    kind: 'failover' | 'switchover',
    old: InstanceEndpoint,
    candidate: ReplicaStatus,
    statuses: readonly InstanceStatus[],
    verdicts: readonly CandidateVerdict[],
    started: number,
  ): Promise<EngineOutcome> {
    const writer = statuses.find((s) => s.reachable && s.role === 'primary');
    if (writer) {
      return this.#refuse(
        kind,
        'second-primary',
        `${writer.name} already accepts writes; refusing to promote ${candidate.name} next to it`,
      );
    }
    const next = this.#endpoint(candidate.name);
    const standbys = this.#o.instances.filter((i) => i.name !== next.name).map((i) => i.name);
    try {
      // Set before promotion so the first commit on the new primary already waits for standbys.
      await alterSystem(this.#control(next), {
        default_transaction_read_only: null,
        synchronous_standby_names: desiredSynchronousStandbyNames(this.#o.synchronous, standbys, new Set()),
      });
      await promote(this.#control(next), 60);
    } catch (error) {
      return this.#refuse(kind, 'promotion-failed', errorMessage(error));
    }
    this.#primary = next.name;
    this.#failingSince = undefined;
    this.#lastPrimaryLsn = undefined;
    const promoted = await observeInstance(next, this.#o.credentials, this.#connect);
    const timeline = promoted.reachable ? promoted.timeline : undefined;
    this.#emit(
      'promoted',
      next.name,
      `${next.name} promoted (${kind}, timeline ${timeline ?? '?'}), replacing ${old.name}`,
    );

    try {
      await ensureSlots(this.#control(next), standbys);
    } catch (error) {
      this.#emit('warning', next.name, errorMessage(error));
    }
    await Promise.all(
      statuses
        .filter((s) => s.name !== next.name && s.reachable)
        .map(async (s) => {
          try {
            await repointStandby(this.#control(this.#endpoint(s.name)), next);
            this.#emit('repointed', s.name, `${s.name} now streams from ${next.name}`);
          } catch (error) {
            this.#emit('warning', s.name, errorMessage(error));
          }
        }),
    );
    await this.#o.routing.routeWritesTo(next);
    this.#emit('routed', next.name, `writes go to ${next.name}`);
    let rejoin = 'requested';
    try {
      await this.#o.actions.rejoinAsReplica(old, next);
      this.#emit('rejoin-requested', old.name, `${old.name} restarts as a replica of ${next.name}`);
    } catch (error) {
      rejoin = `could not ask ${old.name} to rejoin: ${errorMessage(error)}`;
      this.#emit('warning', old.name, rejoin);
    }
    return {
      outcome: 'promoted',
      kind,
      oldPrimary: old.name,
      newPrimary: next.name,
      timeline,
      verdicts,
      durationMs: Date.now() - started,
      rejoin,
    };
  }

  /** Re-points stray replicas and keeps synchronous_standby_names as the durability mode wants. */
  async #keepReplicasInLine(primary: PrimaryStatus, statuses: readonly InstanceStatus[]): Promise<void> {
    const self = this.#endpoint(primary.name);
    for (const s of statuses) {
      if (!s.reachable || s.role !== 'replica') continue;
      const r = s.walReceiver;
      if (r?.status === 'streaming' && r.senderHost === self.host && r.senderPort === self.port) continue;
      try {
        if (await repointStandby(this.#control(this.#endpoint(s.name)), self)) {
          this.#emit('repointed', s.name, `${s.name} now streams from ${self.name}`);
        }
      } catch (error) {
        this.#emit('warning', s.name, errorMessage(error));
      }
    }
    if (!this.#o.synchronous) return;
    const standbys = this.#o.instances.filter((i) => i.name !== primary.name).map((i) => i.name);
    const streaming = new Set(
      primary.standbys.filter((s) => s.state === 'streaming').map((s) => s.applicationName),
    );
    const desired = desiredSynchronousStandbyNames(this.#o.synchronous, standbys, streaming);
    if (desired === primary.synchronousStandbyNames) return;
    await alterSystem(this.#control(self), { synchronous_standby_names: desired });
    this.#emit('synchronous-standbys', primary.name, `synchronous_standby_names = '${desired}'`);
  }

  async #waitForReceiversToStop(others: readonly InstanceEndpoint[]): Promise<InstanceStatus[] | undefined> {
    const deadline = Date.now() + (this.#o.walReceiverStopTimeoutMs ?? 10_000);
    while (true) {
      const statuses = await Promise.all(
        others.map((i) => observeInstance(i, this.#o.credentials, this.#connect)),
      );
      const streaming = statuses.some(
        (s) => s.reachable && s.role === 'replica' && s.walReceiver?.status === 'streaming',
      );
      if (!streaming) return statuses;
      if (Date.now() > deadline) return undefined;
      await sleep(100);
    }
  }

  async #waitForPosition(target: InstanceEndpoint, lsn: Lsn, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const s = await observeInstance(target, this.#o.credentials, this.#connect);
      if (s.reachable && s.role === 'replica' && s.receivedLsn !== undefined && s.receivedLsn >= lsn)
        return true;
      await sleep(50);
    }
    return false;
  }

  async #undoQuiesce(old: InstanceEndpoint): Promise<void> {
    try {
      await alterSystem(this.#control(old), { default_transaction_read_only: null });
      await this.#o.routing.routeWritesTo(old);
    } catch (error) {
      this.#emit('warning', old.name, `could not give writes back to ${old.name}: ${errorMessage(error)}`);
    }
  }

  #refuse(kind: 'failover' | 'switchover', code: RefusalCode, reason: string): Refusal {
    // A failover refused on every probe would flood the log with the same line.
    if (reason !== this.#lastRefusal)
      this.#emit('refused', undefined, `${kind} refused (${code}): ${reason}`);
    this.#lastRefusal = reason;
    return { outcome: 'refused', kind, code, reason };
  }

  #endpoint(name: string): InstanceEndpoint {
    const found = this.#o.instances.find((i) => i.name === name);
    if (!found) throw new Error(`unknown instance '${name}'`);
    return found;
  }

  #control(endpoint: InstanceEndpoint): ControlTarget {
    return { endpoint, credentials: this.#o.credentials, options: this.#connect };
  }

  #emit(type: EngineEvent['type'], instance: string | undefined, message: string): void {
    this.#o.onEvent?.(instance === undefined ? { type, message } : { type, instance, message });
  }
}
