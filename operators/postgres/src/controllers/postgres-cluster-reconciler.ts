// The PostgreSQLCluster reconciler, in four phases: observe (the cluster from the API server, its
// pods, claims and Secrets from the cache), converge the objects a cluster is made of
// (converge-objects.ts, and a rolling restart's next step), drive the failover engine
// (run-failover.ts, its state in the status) and report (status, conditions, Events, metrics). It
// probes the instances on every reconcile and asks to be called again after `probeIntervalMs`, so a
// primary's failure is seen without any Kubernetes event. A write the API server refuses never
// stops that: it backs off on its own (ctx.writes) and the status says so, while probing and
// failing over go on every turn (ADR 0603).
import {
  WriteFailure,
  builtin,
  conditionAsWritten,
  isBeingDeleted,
  refusedWritesProblem,
  warnRefusedWrites,
  KubeClient,
  type KubeObject,
  type Manager,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@homeostat/reconcile';
import { postgresClusters, type PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../api/postgres-versions.ts';
import type { EngineEvent } from '../failover/outcomes.ts';
import { defaultConnectOptions, type ConnectOptions } from '../instance/instance.ts';
import type { Lsn } from '../instance/lsn.ts';
import { stillAnswers } from '../instance/observe.ts';
import type { SeenPositions } from './adopt-retained.ts';
import { archivingReport, primaryArchiving } from './archiving-status.ts';
import { recordEngineEvents, recordEngineOutcome, recordStatusWarnings } from './cluster-events.ts';
import { ClusterMetrics } from './cluster-metrics.ts';
import { instanceName, instanceNames, ordinalOf } from './cluster-names.ts';
import { clusterStatus } from './cluster-status.ts';
import { convergeObjects, type ConvergeInputs } from './converge-objects.ts';
import { countsFromStatus, failoverFieldManager, stateFromStatus } from './failover-status.ts';
import { fencedOnRequest, outOfService, primaryHold } from './fenced-instances.ts';
import { instanceFailures, type InstanceFailure } from './instance-failures.ts';
import { podWorld } from './kubernetes-world.ts';
import { primaryOf } from './missing-pod-role.ts';
import { labelKeys, managedSelector, routingFieldManager } from './operand-labels.ts';
import { retainedInstances } from './retained-claims.ts';
import { nextRolloutStep, restartForRollout } from './rolling-restart.ts';
import { runFailover, type FailoverRunResult } from './run-failover.ts';
import { keepSuperuserAccess } from './superuser-access.ts';
import { defaultPausedReplayGraceMs, pausesToResume, resumeForgottenPauses } from './forgotten-pauses.ts';
import {
  instanceAccess,
  ofClusterByName,
  type InstanceAccess,
  type InstanceEndpointOf,
} from './instance-access.ts';

export interface PostgresClusterReconcilerOptions {
  /** The image of each supported PostgreSQL version, for clusters that name none. */
  readonly imageFor: (version: MajorVersion) => string;
  /** How often a cluster's instances are probed (default 500 ms). */
  readonly probeIntervalMs?: number;
  /** Where the operator reaches an instance; default its DNS name through the headless Service. */
  readonly instanceEndpoint?: InstanceEndpointOf;
  readonly connect?: ConnectOptions;
  /** A replica further behind than this is never promoted (default 16 MiB). */
  readonly maxLagBytes?: bigint;
  /** How long a failover waits for an eligible replica before the old primary is brought back. */
  readonly electionTimeoutMs?: number;
  /** A replica's replay seen paused this long is resumed (default 15 min, above a drill count's bound). */
  readonly pausedReplayGraceMs?: number;
}

/**
 * Inside the cluster an instance answers a connection in milliseconds; one that does not within
 * half a second is gone, cut off or starved. A probe of a cut-off primary costs this much, so it
 * bounds how soon its failure is seen (a slow answer alone never fails over: the primary must
 * stay failing for `failoverDelay`).
 */
const operatorConnectOptions: ConnectOptions = { ...defaultConnectOptions, connectTimeoutMs: 500 };

/** What the reconciler keeps per cluster between reconciles, never in status. */
interface ClusterMemory {
  /** The primary's last WAL position: it moves with every write, so it reaches the status only
   * when a failover starts (operation.referenceLsn). */
  lastPrimaryLsn?: Lsn | undefined;
  /** A cluster made again on retained claims: the standbys' positions its last adoption turn saw. */
  retainedSeen?: SeenPositions | undefined;
  /** The last turn's 'still-read-only' message: its Event is recorded once while it lasts. */
  readOnlyNotice?: string | undefined;
  /** When each replica was first seen with its replay paused (forgotten-pauses.ts). */
  pausedSince?: Map<string, number>;
  /** The last fencing problem reported: its Event is recorded once while it lasts. */
  fencingProblem?: string | undefined;
}

/** The memory of cluster `key`, made on first use. */
function clusterMemory(memories: Map<string, ClusterMemory>, key: string): ClusterMemory {
  const found = memories.get(key) ?? {};
  memories.set(key, found);
  return found;
}

/**
 * What one reconcile saw before acting: the cluster (from the API server: the failover state must
 * never be a cache's that missed the last save) and its instances' objects, as converging takes them.
 */
interface Observed extends Omit<ConvergeInputs, 'image' | 'routingClient'> {
  readonly key: string;
  /** Why the fencing request is not (wholly) followed, when it is not (fenced-instances.ts). */
  readonly fencingProblem: string | undefined;
  /** Instances whose postgres container is down after failing. */
  readonly failures: readonly InstanceFailure[];
}

/** What converging the objects left. */
interface Converged {
  readonly restartPending: readonly string[];
  /** Writes refused in this reconcile (a name someone else holds first). */
  readonly refusals: readonly WriteFailure[];
  /** The instance a rolling restart's switchover moves the primary to now, if any. */
  readonly rolloutPrimary: string | undefined;
}

/** What a turn of the engine leaves: no view when the operator has no credentials yet. */
type EngineTurn = Omit<FailoverRunResult, 'view'> & { view: FailoverRunResult['view'] | undefined };

const clusterLabel = labelKeys.cluster;

function byName<T extends KubeObject>(objects: readonly T[]): Map<string, T> {
  return new Map(objects.map((o) => [o.metadata?.name ?? '', o]));
}

export class PostgresClusterReconciler implements Reconciler<PostgresCluster> {
  readonly #options: PostgresClusterReconcilerOptions;
  readonly #probeIntervalMs: number;
  readonly #metrics: ClusterMetrics;
  readonly #memory = new Map<string, ClusterMemory>();
  // Only what this operator made is cached, never every pod, claim or Secret of the cluster.
  readonly #pods;
  readonly #claims;
  readonly #secrets;

  constructor(manager: Manager, options: PostgresClusterReconcilerOptions) {
    this.#options = options;
    this.#probeIntervalMs = options.probeIntervalMs ?? 500;
    this.#metrics = new ClusterMetrics(manager.metrics.registry);
    const selector = { labelSelector: managedSelector };
    this.#pods = manager.cache.informer(builtin.pods, selector);
    this.#claims = manager.cache.informer(builtin.persistentVolumeClaims, selector);
    this.#secrets = manager.cache.informer(builtin.secrets, selector);
  }

  async reconcile(
    { namespace = 'default', name, object }: ReconcileRequest<PostgresCluster>,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    if (!object || isBeingDeleted(object)) {
      // Deleted: garbage collection removes what it owns (ownerReferences).
      this.#memory.delete(`${namespace}/${name}`);
      this.#metrics.forget(namespace, name);
      return undefined;
    }
    const seen = await this.observe(namespace, name, ctx);
    const converged = await this.converge(seen, ctx);
    const turn = await this.driveEngine(seen, converged.rolloutPrimary, ctx);
    return this.report(seen, converged, turn, ctx);
  }

  /** The cluster from the API server; its instances' pods, claims and Secrets from the cache. */
  async observe(namespace: string, name: string, ctx: ReconcileContext): Promise<Observed> {
    const cluster = await ctx.client.get(postgresClusters, name, namespace);
    const ofCluster = <T extends KubeObject>(objects: readonly T[]) =>
      objects.filter((o) => o.metadata?.labels?.[clusterLabel] === name);
    const instancesOf = <T extends KubeObject>(objects: readonly T[]) =>
      byName(ofCluster(objects).filter((o) => ordinalOf(name, o.metadata?.name ?? '') !== undefined));
    const pods = instancesOf(this.#pods.store.byIndex('namespace', namespace));
    const claims = instancesOf(this.#claims.store.byIndex('namespace', namespace));
    const fencing = fencedOnRequest(cluster, pods);
    return {
      key: `${namespace}/${name}`,
      cluster,
      state: stateFromStatus(cluster),
      pods,
      claims,
      secrets: ofClusterByName(this.#secrets.store.byIndex('namespace', namespace), name),
      retained: retainedInstances(cluster, claims).filter(
        (instance) => (ordinalOf(name, instance) ?? Infinity) < cluster.spec.instances,
      ),
      // A fenced instance's PostgreSQL is stopped on purpose: not a failure to report or replace.
      failures: instanceFailures(pods).filter((f) => !fencing.instances.has(f.instance)),
      fenced: fencing.instances,
      outOfService: outOfService(fencing.instances, pods),
      fencingProblem: fencing.problem,
    };
  }

  /** The cluster's objects, then a rolling restart's next step; refused writes are reported. */
  async converge(seen: Observed, ctx: ReconcileContext): Promise<Converged> {
    const { cluster, state, pods } = seen;
    const name = cluster.metadata?.name ?? '';
    let owned: WriteFailure | undefined;
    let restartPending: readonly string[] = [];
    try {
      const routingClient = new KubeClient(ctx.client.transport, {
        fieldManager: routingFieldManager,
      }).withSignal(ctx.signal);
      const image = cluster.spec.image ?? this.#options.imageFor(cluster.spec.postgresVersion);
      ({ restartPending } = await convergeObjects({ ...seen, image, routingClient }, ctx));
    } catch (error) {
      // Only a name someone else holds stops the converging (assertOwnedOrAbsent).
      if (!(error instanceof WriteFailure)) throw error;
      owned = error;
    }
    const rollout = nextRolloutStep({
      cluster: name,
      primary: primaryOf(name, state),
      // A fenced instance sits the rollout out (it is never ready meanwhile); unfenced, it rolls.
      pods: new Map([...pods].filter(([instance]) => !seen.outOfService.has(instance))),
      restartPending,
      readyInstances: new Set(cluster.status?.instanceStatuses?.filter((i) => i.ready).map((i) => i.name)),
      instances: cluster.spec.instances,
      busy: !state || state.operation !== undefined,
      operation: state?.operation !== undefined,
      failing: new Set(seen.failures.map((f) => f.instance)),
    });
    await restartForRollout(rollout, cluster, pods, ctx);
    const refusals = [...(owned ? [owned] : []), ...ctx.writes.failures];
    // As last written: the cache may not show the status the reconcile before wrote yet.
    const reported =
      (await conditionAsWritten(ctx.client, postgresClusters, cluster, 'Degraded'))?.message ?? '';
    await warnRefusedWrites(ctx.events, cluster, refusals, reported);
    return {
      restartPending,
      refusals,
      rolloutPrimary: rollout.type === 'switchover' ? rollout.to : undefined,
    };
  }

  /** A turn of the failover engine: probe, fail over or switch over, route; then its Events. */
  async driveEngine(
    seen: Observed,
    rolloutPrimary: string | undefined,
    ctx: ReconcileContext,
  ): Promise<EngineTurn> {
    const access = this.instanceAccess(seen);
    if (!access) return { state: seen.state, view: undefined };
    const { cluster } = seen;
    const namespace = cluster.metadata?.namespace ?? 'default';
    const memory = clusterMemory(this.#memory, seen.key);
    // A primary fenced on request is stopped on purpose, and one just unfenced is starting again:
    // neither is failed over (the engine holds while it does not answer; ADR 0223). Nor is a
    // fenced primary switched over while it still answers: the fence would stop it mid-switchover.
    const currentPrimary = seen.state?.currentPrimary;
    const desiredPrimary =
      currentPrimary !== undefined && seen.outOfService.has(currentPrimary)
        ? undefined
        : this.desiredPrimary(seen, rolloutPrimary);
    const hold = primaryHold(
      currentPrimary,
      seen.outOfService,
      currentPrimary === undefined ? undefined : seen.pods.get(currentPrimary),
      Date.now(),
    );
    const events: EngineEvent[] = [];
    let result: FailoverRunResult;
    try {
      result = await runFailover({
        cluster,
        state: seen.state,
        instances: this.instancesToProbe(seen),
        retained: seen.retained,
        ...access,
        failoverClient: new KubeClient(ctx.client.transport, {
          fieldManager: failoverFieldManager,
        }).withSignal(ctx.signal),
        world: podWorld({
          client: ctx.client,
          routingClient: new KubeClient(ctx.client.transport, {
            fieldManager: routingFieldManager,
          }).withSignal(ctx.signal),
          namespace,
          answers: (instance) => stillAnswers(instance, access.credentials, access.connect),
        }),
        ...(desiredPrimary === undefined ? {} : { desiredPrimary }),
        ...(hold === undefined ? {} : { hold }),
        ...(memory.lastPrimaryLsn === undefined ? {} : { lastPrimaryLsn: memory.lastPrimaryLsn }),
        ...(memory.retainedSeen === undefined ? {} : { retainedSeen: memory.retainedSeen }),
        ...(this.#options.maxLagBytes === undefined ? {} : { maxLagBytes: this.#options.maxLagBytes }),
        ...(this.#options.electionTimeoutMs === undefined
          ? {}
          : { electionTimeoutMs: this.#options.electionTimeoutMs }),
        emit: (event) => {
          events.push(event);
          ctx.log.info({ engineEvent: event.type, instance: event.instance }, event.message);
        },
      });
    } finally {
      // A primary still read-only is said once while it lasts, not every turn.
      const notice = events.find((e) => e.type === 'still-read-only')?.message;
      const previous = memory.readOnlyNotice;
      memory.readOnlyNotice = notice;
      await recordEngineEvents(
        cluster,
        events.filter((e) => e.type !== 'still-read-only' || e.message !== previous),
        ctx,
      );
    }
    if (result.held !== undefined) ctx.log.debug({ hold: result.held }, 'the failover engine only observes');
    await keepSuperuserAccess(cluster, result, seen.secrets, access, ctx);
    const graceMs = this.#options.pausedReplayGraceMs ?? defaultPausedReplayGraceMs;
    memory.pausedSince ??= new Map();
    const due = pausesToResume(memory.pausedSince, result.view, Date.now(), graceMs);
    await resumeForgottenPauses(cluster, due, graceMs, access, ctx);
    memory.lastPrimaryLsn = result.lastPrimaryLsn;
    memory.retainedSeen = result.retainedSeen;
    await recordEngineOutcome(cluster, result.outcome, ctx);
    return result;
  }

  /** Status, conditions, metrics and their Events from what this reconcile saw and did. */
  async report(
    seen: Observed,
    converged: Converged,
    turn: EngineTurn,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult> {
    const { cluster } = seen;
    const name = cluster.metadata?.name ?? '';
    const namespace = cluster.metadata?.namespace ?? 'default';
    // Archiving is read from a settled primary only: during an operation the old one may be fenced.
    const primaryArchive = primaryArchiving(turn.state?.currentPrimary, turn.view?.instances);
    const archiving = archivingReport(cluster, turn.state?.operation ? undefined : primaryArchive);
    if (archiving.event) {
      const { type, reason, message } = archiving.event;
      if (type === 'Warning') await ctx.events.warning(cluster, reason, 'Archive', message);
      else await ctx.events.normal(cluster, reason, 'Archive', message);
    }
    const writeError = refusedWritesProblem(converged.refusals);
    const memory = clusterMemory(this.#memory, seen.key);
    if (seen.fencingProblem !== memory.fencingProblem) {
      memory.fencingProblem = seen.fencingProblem;
      if (seen.fencingProblem)
        await ctx.events.warning(cluster, 'FencingRequestInvalid', 'Fence', seen.fencingProblem);
    }
    const status = clusterStatus(cluster, {
      state: turn.state,
      pods: seen.pods,
      fenced: seen.fenced,
      ...(seen.fencingProblem ? { fencingProblem: seen.fencingProblem } : {}),
      view: turn.view,
      restartPending: converged.restartPending,
      ...(writeError ? { writeError } : {}),
      ...(turn.outcome?.outcome === 'promoted' && turn.outcome.timeline !== undefined
        ? { promotedTimeline: turn.outcome.timeline }
        : {}),
      ...(turn.outcome?.outcome === 'refused'
        ? { refusal: { kind: turn.outcome.kind, reason: turn.outcome.reason } }
        : {}),
      failures: seen.failures,
      ...(turn.bootstrapWaiting === undefined ? {} : { bootstrapWaiting: turn.bootstrapWaiting }),
      archiving,
    });
    await recordStatusWarnings(cluster, status, ctx);
    // The counts are the failover field manager's (read at the start of this reconcile; one that
    // completed in it shows on the next, half a second later).
    this.#metrics.record(
      namespace,
      name,
      { ...countsFromStatus(cluster), ...status },
      turn.state?.failingSince,
    );
    this.#metrics.recordArchiving(namespace, name, primaryArchive);
    await ctx.client.applyStatusIfChanged(
      postgresClusters,
      { metadata: { name, namespace }, status },
      cluster,
    );
    // Probing goes on at its interval whatever was refused; refused writes come back on their
    // own backoff (the controller requeues sooner when one is due).
    return { requeueAfterMs: Math.min(turn.retryAfterMs ?? this.#probeIntervalMs, this.#probeIntervalMs) };
  }

  /** The operator's credentials and how it reaches each instance (instance-access.ts). */
  instanceAccess({ cluster, pods, secrets }: Observed): InstanceAccess | undefined {
    return instanceAccess(
      cluster,
      pods,
      secrets,
      this.#options.connect ?? operatorConnectOptions,
      this.#options.instanceEndpoint,
    );
  }

  /** The instances the spec names and any pod beyond them (scaling down), in ordinal order. */
  instancesToProbe({ cluster, pods }: Observed): string[] {
    const name = cluster.metadata?.name ?? '';
    return [...new Set([...instanceNames(name, cluster.spec.instances), ...pods.keys()])].sort(
      (a, b) => (ordinalOf(name, a) ?? 0) - (ordinalOf(name, b) ?? 0),
    );
  }

  /**
   * Where the primary should be: a rolling restart's switchover comes first (the primary it moves
   * away from comes back restarted, and spec.primary, if it names that one, then switches back to
   * it); scaling down past the primary moves it to the first instance.
   */
  desiredPrimary({ cluster, state }: Observed, rolloutPrimary: string | undefined): string | undefined {
    const name = cluster.metadata?.name ?? '';
    const surplusPrimary = (ordinalOf(name, primaryOf(name, state)) ?? 0) >= cluster.spec.instances;
    return rolloutPrimary ?? cluster.spec.primary ?? (surplusPrimary ? instanceName(name, 0) : undefined);
  }
}
