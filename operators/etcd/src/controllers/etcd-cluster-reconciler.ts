// The EtcdCluster reconciler, in named phases: prepare the round, make the certificates, connect,
// converge the cluster objects, observe, supervise quorum, drive the members (ADR 0301: one step at
// a time), report. Every line is safe to repeat: what exists is read from the caches and etcd,
// never remembered. A write the API server refuses backs off on its own (ctx.writes) and is
// reported in status; observation, membership and recovery supervision run regardless (ADR 0603).
// A Refusal ends the phases where it is thrown; the report works from what the earlier ones found.
import {
  PermanentError,
  WriteFailure,
  conditionAsWritten,
  isBeingDeleted,
  refusedWritesProblem,
  warnRefusedWrites,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  type Store,
} from '@homeostat/reconcile';
import type { EtcdBackup } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster, type EtcdClusterStatusFields } from '../api/etcd-cluster-types.ts';
import { imageOf, minorOf } from '../api/etcd-versions.ts';
import type { EtcdConnection } from '../connection.ts';
import { messageOf } from '../errors.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import type { StepOutcome } from '../membership/membership-reconciler.ts';
import type { ClusterGauges } from '../metrics/cluster-gauges.ts';
import { defaultOperatorImage, nameOf, namespaceOf, ordinalOf, tlsSecretNames } from './cluster-names.ts';
import { applyClaimRetention, applyClusterObjects } from './cluster-objects.ts';
import { memberPodFacts } from './member-pod-facts.ts';
import { clusterStatus, type Problem } from './cluster-status.ts';
import { ensureGeneratedTls } from './cluster-tls.ts';
import { podImage } from './desired-member-pod.ts';
import {
  assertNoPreviousObjects,
  assertNoRetainedClaims,
  hasRetainedMembers,
} from './earlier-cluster-objects.ts';
import type { MemberAddressing } from './member-addressing.ts';
import { convergeMembers, maintain, restartMembers, seed, upgradeMembers } from './member-steps.ts';
import type { OwnedObjects } from './owned-objects.ts';
import { isOpen, RefusedBackups, superviseQuorum, type RecoveryDecision } from './quorum-recovery.ts';
import { Refusal, asRefusal } from './refusal.ts';
import { versionOfImage, type UpgradeOutcome } from './rolling-upgrade.ts';
import {
  credentialsOf,
  desiredMembers,
  endpointsOf,
  keepingRunningVersion,
  type Round,
  type RoundStart,
} from './round.ts';
import { judgeVersionChange, type VersionChange } from './version-change.ts';

export interface EtcdClusterReconcilerOptions {
  /** Where members are reached and listen: DNS names in a cluster, loopback ports in tests. */
  readonly addressing: MemberAddressing;
  /** Repository of the etcd images (tags v<version>); etcd's own by default. */
  readonly imageRepository?: string;
  /** Deadline of each call to etcd, in ms (default 5000). */
  readonly etcdCallTimeoutMs?: number;
  /** How often a converged cluster's health is read again, in ms (default 30 s). */
  readonly healthIntervalMs?: number;
  /** How soon a cluster that is changing (creating, scaling) is looked at again, in ms (default 2 s). */
  readonly stepIntervalMs?: number;
  /** The operator's own image: the restore steps of a cluster made from a backup run in it. */
  readonly operatorImage?: string;
  /** The operator's per-cluster gauges, fed from each reconcile's status. */
  readonly gauges?: ClusterGauges;
}

/** What the observe phase saw. */
interface Observation {
  /** etcd's view through the members that answer; absent when none does. */
  readonly health?: ClusterHealth;
  /** Why etcd could not be read, when it could not. */
  readonly unreachable?: string;
  /** spec.version against what the member pods run and etcd's cluster version. */
  readonly versionChange: VersionChange;
}

/**
 * What the phases of one round found and did, each field written as its phase completes. A
 * Refusal ends the phases: the fields of those not reached stay absent, and the report works from
 * the rest (a paused cluster reaches only the observe phase).
 */
interface RoundOutcome {
  /** certificates: the cluster CA is missing (the members go on with the certificates they hold). */
  tlsProblem?: Problem | undefined;
  /** observe: etcd's health and the version change. */
  observed?: Observation;
  /** supervise: the quorum-loss recovery's decision (status.recovery, whether it drives members). */
  recovery?: RecoveryDecision;
  /** driveMembers: the membership step taken when etcd answered. */
  step?: StepOutcome;
  /** driveMembers: the upgrade step taken once membership had converged. */
  upgrade?: UpgradeOutcome;
  /** What ended the phases early. */
  refusal?: Refusal;
}

/** The problem Degraded reports, and the part of it that slows the next look. */
interface Problems {
  /** What status says (an engine's problem, else the refused writes). */
  readonly problem: Problem | undefined;
  /** An engine that cannot go on: the cluster is then looked at at the health pace. */
  readonly engineProblem: Problem | undefined;
}

export class EtcdClusterReconciler implements Reconciler<EtcdCluster> {
  readonly #owned: OwnedObjects;
  readonly #backups: Store<EtcdBackup>;
  // Backups a disaster recovery found it cannot restore: each is checked and reported once.
  readonly #refusedBackups = new RefusedBackups();
  /** Clusters (by uid) whose status this operator last wrote with a recovery open. */
  readonly #openRecoveries = new Set<string>();
  readonly #options: EtcdClusterReconcilerOptions;
  readonly #operatorImage: string;

  /**
   * `owned`: the caches of what the operator makes; `backups`: the EtcdBackups (the backup-age gauge
   * and disaster recovery, which restores the newest good one, read them).
   */
  constructor(owned: OwnedObjects, backups: Store<EtcdBackup>, options: EtcdClusterReconcilerOptions) {
    this.#owned = owned;
    this.#backups = backups;
    this.#options = options;
    this.#operatorImage = options.operatorImage ?? defaultOperatorImage;
  }

  async reconcile(
    { namespace, name, object: cluster }: ReconcileRequest<EtcdCluster>,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult> {
    // Deleted or being deleted: garbage collection removes what it owns (ownerReferences).
    if (!cluster || isBeingDeleted(cluster)) return this.forget(namespace ?? '', name);
    const start = await this.prepare(cluster, ctx);
    const outcome = await this.drive(start);
    return this.report(start, outcome);
  }

  /** A cluster gone: its gauges go too. */
  forget(namespace: string, name: string): ReconcileResult {
    this.#options.gauges?.forget({ namespace, name });
    return {};
  }

  /** The image the spec's version runs, the member runtime, and the desired members. */
  async prepare(cluster: EtcdCluster, ctx: ReconcileContext): Promise<RoundStart> {
    const { addressing, imageRepository } = this.#options;
    const image = imageOf(cluster.spec.version, imageRepository) ?? '';
    const deps = { cluster, client: ctx.client, events: ctx.events, owned: this.#owned, addressing, image };
    return { cluster, ctx, deps, desired: await desiredMembers(cluster, addressing) };
  }

  /** The phases in order; a Refusal or a refused write ends them, kept beside what they found. */
  async drive(start: RoundStart): Promise<RoundOutcome> {
    const { cluster } = start;
    const paused = cluster.spec.paused;
    const outcome: RoundOutcome = {};
    try {
      if (!start.deps.image) {
        throw new Refusal('UnknownVersion', `no image for etcd ${cluster.spec.version}`, { permanent: true });
      }
      if (!paused) assertNoPreviousObjects(cluster, this.#owned);
      if (!paused) outcome.tlsProblem = await this.certificates(start);
      const round = await this.connect(start);
      // Observation and healing never wait on these (ADR 0603).
      if (!paused) await this.convergeObjects(round);
      const observed = await this.observe(round);
      outcome.observed = observed;
      if (paused) return outcome;
      const steady = keepingRunningVersion(round, observed.versionChange);
      outcome.recovery = await this.supervise(steady, observed.health);
      if (!outcome.recovery.inCharge) await this.driveMembers(steady, observed, outcome);
    } catch (thrown) {
      const error = asRefusal(thrown);
      if (!error) throw thrown;
      outcome.refusal = error;
      // A permanent refusal's Event comes with the PermanentError of the report; a refused write's
      // with the other refused writes (ctx.writes); any other (a name someone else holds) here,
      // once while Degraded says it: every look finds it again while it lasts.
      const withWrites =
        error.cause instanceof WriteFailure && start.ctx.writes.failures.includes(error.cause);
      const alreadySaid = (await degradedAsWritten(start)).includes(error.message);
      if (!error.permanent && !withWrites && !alreadySaid) {
        await start.ctx.events.warning(cluster, error.reason, 'Reconcile', error.message);
      }
    }
    return outcome;
  }

  /** Certificates first: no member pod may start without the Secrets it mounts. */
  async certificates({ cluster, ctx }: RoundStart): Promise<Problem | undefined> {
    const tls = await ctx.writes.attempt('making the TLS Secrets', () =>
      ensureGeneratedTls(cluster, ctx.client, this.#owned, this.#options.addressing),
    );
    if (tls?.made.length) {
      await ctx.events.normal(
        cluster,
        'CertificatesCreated',
        'Create',
        `created Secrets ${tls.made.join(', ')}`,
      );
    }
    if (tls?.renewed.length) {
      await ctx.events.normal(
        cluster,
        'CertificatesRenewed',
        'Renew',
        `issued the certificates in ${tls.renewed.join(', ')} again before they expire; members read them at their next handshakes`,
      );
    }
    // The members go on with the certificates they hold: observed and healed as usual.
    return tls?.caMissing ? { reason: 'CertificateAuthorityMissing', message: tls.caMissing } : undefined;
  }

  /** The connection to etcd: every member pod's client URL and the operator's client certificate. */
  async connect(start: RoundStart): Promise<Round> {
    const { cluster, ctx } = start;
    const connection: EtcdConnection = {
      endpoints: await endpointsOf(cluster, this.#owned, this.#options.addressing),
      callTimeoutMs: this.#options.etcdCallTimeoutMs ?? 5000,
      credentials: await credentialsOf(cluster, ctx, this.#owned),
    };
    return { ...start, connection };
  }

  /** Services, PodDisruptionBudget and claim owners: a refused write is recorded, not waited on. */
  async convergeObjects(round: Round): Promise<void> {
    await applyClusterObjects(round);
    await applyClaimRetention(round);
  }

  /** etcd's health through the members that answer, and how spec.version compares with it. */
  async observe({ cluster, connection }: Round): Promise<Observation> {
    const read = await readHealth(connection);
    const versionChange = judgeVersionChange(
      cluster.spec.version,
      podVersions(cluster, this.#owned),
      read.health?.clusterVersion,
      this.#options.imageRepository,
    );
    return { ...read, versionChange };
  }

  /** The quorum-loss recovery (quorum-recovery.ts): whether it drives the members this round. */
  async supervise(round: Round, health: ClusterHealth | undefined): Promise<RecoveryDecision> {
    return superviseQuorum({
      cluster: round.cluster,
      deps: round.deps,
      events: round.ctx.events,
      health,
      backups: this.#backups.list(),
      seedFrom: (backup) => seed(round, this.#operatorImage, backup),
      operatorImage: this.#operatorImage,
      refused: this.#refusedBackups,
      openAsWritten: this.#openRecoveries.has(round.cluster.metadata?.uid ?? ''),
      now: new Date(),
    });
  }

  /** A membership step; once it has converged, an upgrade step; once at version, maintenance. */
  async driveMembers(
    round: Round,
    { health, versionChange }: Observation,
    outcome: RoundOutcome,
  ): Promise<void> {
    if (!health) return this.startMembers(round);
    outcome.step = await convergeMembers(round, health);
    if (outcome.step.kind !== 'converged' || versionChange.kind === 'refused') return;
    outcome.upgrade = await upgradeMembers(round, health);
    if (outcome.upgrade.kind === 'at-version') await maintain(round, health);
  }

  /** No member answers: restart those that hold data, or seed a new cluster. */
  async startMembers(round: Round): Promise<void> {
    const { cluster } = round;
    if (cluster.status?.clusterId) return restartMembers(round);
    if (cluster.spec.bootstrap?.fromBackup) assertNoRetainedClaims(cluster, this.#owned);
    if (hasRetainedMembers(cluster, this.#owned)) return restartMembers(round);
    return seed(round, this.#operatorImage);
  }

  /** Status, Events and gauges from the outcome; then a permanent refusal's error, or the next look. */
  async report(start: RoundStart, outcome: RoundOutcome): Promise<ReconcileResult> {
    const problems = await this.assembleProblems(start, outcome);
    const status = await this.writeStatus(start, outcome, problems.problem);
    const uid = start.cluster.metadata?.uid ?? '';
    if (isOpen(status.recovery)) this.#openRecoveries.add(uid);
    else this.#openRecoveries.delete(uid);
    // After the status says why: a spec that cannot be carried out waits for a change of it. A
    // refused write is not thrown: it comes back on its own backoff (the controller requeues
    // sooner when it is due), and health is looked at meanwhile as always.
    const { refusal } = outcome;
    if (refusal?.permanent) throw new PermanentError(refusal.reason, refusal.message);
    return this.nextLook(outcome, status, problems.engineProblem);
  }

  /** What Degraded says, with an Event for each problem it does not say yet. */
  async assembleProblems({ cluster, ctx }: RoundStart, outcome: RoundOutcome): Promise<Problems> {
    const { refusal, recovery, tlsProblem } = outcome;
    const degraded = await degradedAsWritten({ cluster, ctx });
    const earlier = refusal ? { reason: refusal.reason, message: refusal.message } : recovery?.problem;
    const change = outcome.observed?.versionChange;
    const refusedChange =
      change?.kind === 'refused' ? { reason: change.reason, message: change.message } : undefined;
    // Every reconcile finds these while they last: one Event each, when Degraded does not say it yet.
    if (refusedChange && !earlier && !degraded.includes(refusedChange.message))
      await ctx.events.warning(cluster, refusedChange.reason, 'Upgrade', refusedChange.message);
    if (tlsProblem && !degraded.includes(tlsProblem.message))
      await ctx.events.warning(cluster, tlsProblem.reason, 'Reconcile', tlsProblem.message);
    // A lost CA is named beside whatever else holds Degraded: it must not wait for that to clear.
    const engineProblem = withTlsProblem(earlier ?? refusedChange, tlsProblem);
    // Refused writes are reported, but the cluster is looked after at the usual pace.
    const refused = ctx.writes.failures;
    const problem = engineProblem ?? (refused.length ? refusedWritesProblem(refused) : undefined);
    await warnRefusedWrites(ctx.events, cluster, refused, degraded);
    return { problem, engineProblem };
  }

  /** The status (written if changed), the gauges, and the Events of a cluster made or quorum lost. */
  async writeStatus(
    { cluster, ctx, desired }: RoundStart,
    { recovery, observed, step }: RoundOutcome,
    problem: Problem | undefined,
  ): Promise<EtcdClusterStatusFields> {
    // While quorum is lost or a recovery runs, the status as last written (the cache may lag
    // this operator's own last write): what transitions, and their Events, are decided from.
    const latest = recovery?.seen ?? cluster;
    const status = clusterStatus(latest, {
      recovery: recovery ? recovery.status : cluster.status?.recovery,
      desired,
      health: observed?.health,
      unreachable: observed?.unreachable,
      operatorCutOff: recovery?.operatorCutOff,
      ...memberPodFacts(desired, (name) => this.#owned.pod(cluster, name)),
      step,
      problem,
      clientEndpoint: this.#options.addressing.clientEndpoint(cluster),
      clientSecret: tlsSecretNames(cluster)?.client,
    });
    this.recordGauges(cluster, status);
    await announceTransitions(cluster, latest.status, status, ctx);
    await ctx.client.applyStatusIfChanged(
      etcdClusters,
      { metadata: { name: nameOf(cluster), namespace: namespaceOf(cluster) }, status },
      latest,
    );
    return status;
  }

  /** The cluster's gauges from its status, and the finish of its newest Succeeded EtcdBackup. */
  recordGauges(cluster: EtcdCluster, status: EtcdClusterStatusFields): void {
    const { gauges } = this.#options;
    gauges?.observe(cluster, status);
    // From the cache: the backup controller writes it.
    const lastBackup = newestBackupFinish(this.#backups.list(), cluster);
    if (lastBackup) gauges?.backupSucceeded(cluster, lastBackup);
  }

  /** Membership moves in steps: come back soon while it does, otherwise poll health. */
  nextLook(
    { step, upgrade, observed, recovery }: RoundOutcome,
    status: EtcdClusterStatusFields,
    engineProblem: Problem | undefined,
  ): ReconcileResult {
    const busy =
      (step !== undefined && step.kind !== 'converged') ||
      (upgrade !== undefined && upgrade.kind !== 'at-version') ||
      !status.clusterId ||
      !observed?.health ||
      // Every member runs a newer minor than etcd's cluster version: etcd moves it within seconds,
      // and until status says so the API server would still let a way back through.
      clusterVersionLags(status);
    const requeueAfterMs =
      busy && !engineProblem
        ? (this.#options.stepIntervalMs ?? 2000)
        : (this.#options.healthIntervalMs ?? 30_000);
    // A recovery step to follow, or the end of its wait, may come sooner.
    return { requeueAfterMs: Math.min(requeueAfterMs, recovery?.requeueAfterMs ?? requeueAfterMs) };
  }
}

/** Reads etcd through every member that has a pod; no health (with why) when none answers. */
async function readHealth(
  connection: EtcdConnection,
): Promise<{ health?: ClusterHealth; unreachable?: string }> {
  if (connection.endpoints.length === 0) return { unreachable: 'no member pod exists' };
  try {
    return { health: await readClusterHealth(connection) };
  } catch (error) {
    return { unreachable: messageOf(error) };
  }
}

/** The versions the member pods' images name (what their containers run or are restarting into). */
function podVersions(cluster: EtcdCluster, owned: OwnedObjects): string[] {
  return owned
    .podsOf(cluster)
    .filter((p) => ordinalOf(nameOf(cluster), p.metadata?.name ?? '') !== undefined)
    .flatMap((p) => versionOfImage(podImage(p)) ?? []);
}

/** `problem` with the CA's named beside it, or the CA's alone. */
function withTlsProblem(problem: Problem | undefined, tlsProblem: Problem | undefined): Problem | undefined {
  if (!tlsProblem) return problem;
  return problem ? { ...problem, message: `${problem.message}; ${tlsProblem.message}` } : tlsProblem;
}

/** ClusterCreated when the cluster ID first appears, QuorumLost when the phase turns to it. */
async function announceTransitions(
  cluster: EtcdCluster,
  before: EtcdClusterStatusFields | undefined,
  status: EtcdClusterStatusFields,
  ctx: ReconcileContext,
): Promise<void> {
  if (!before?.clusterId && status.clusterId) {
    await ctx.events.normal(cluster, 'ClusterCreated', 'Create', `etcd cluster ${status.clusterId} answers`);
  }
  if (status.phase === 'QuorumLost' && before?.phase !== 'QuorumLost') {
    await ctx.events.warning(
      cluster,
      'QuorumLost',
      'Observe',
      status.conditions?.find((c) => c.type === 'QuorumLost')?.message ?? '',
    );
  }
}

/** Whether the members all run a newer minor than the cluster version status records. */
function clusterVersionLags(status: { currentVersion?: string; clusterVersion?: string }): boolean {
  const { currentVersion, clusterVersion } = status;
  return !!currentVersion && !!clusterVersion && minorOf(currentVersion) !== minorOf(clusterVersion);
}

/**
 * What Degraded says as this process last wrote it ('' without one): the cache may not show the
 * status the reconcile before wrote, and a problem it said would be said again.
 */
async function degradedAsWritten({ cluster, ctx }: Pick<RoundStart, 'cluster' | 'ctx'>): Promise<string> {
  return (await conditionAsWritten(ctx.client, etcdClusters, cluster, 'Degraded'))?.message ?? '';
}

/** When the newest Succeeded EtcdBackup of `cluster` finished, if any. */
function newestBackupFinish(backups: readonly EtcdBackup[], cluster: EtcdCluster): Date | undefined {
  const times = backups
    .filter(
      (b) =>
        b.metadata?.namespace === namespaceOf(cluster) &&
        b.spec.clusterName === nameOf(cluster) &&
        b.status?.phase === 'Succeeded' &&
        b.status.finishedAt,
    )
    .map((b) => Date.parse(b.status?.finishedAt ?? ''))
    .filter((t) => !Number.isNaN(t));
  return times.length ? new Date(Math.max(...times)) : undefined;
}
