// The EtcdCluster reconciler: Services and PodDisruptionBudget by server-side apply; members as
// pods and claims driven one step at a time by the engine (ADR 0301); status from etcd's own view.
// Every line is safe to repeat: what exists is read from the caches and etcd, never remembered.
// A write the API server refuses backs off on its own (ctx.writes) and is reported in status;
// observation, membership and recovery supervision run regardless (ADR 0603).
import {
  PermanentError,
  WriteFailure,
  generationChanged,
  isBeingDeleted,
  mapToLabelledOwner,
  refusedWritesProblem,
  warnRefusedWrites,
  watch,
  type Controller,
  type Manager,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { imageOf, minorOf } from '../api/etcd-versions.ts';
import { messageOf } from '../errors.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import type { StepOutcome } from '../membership/membership-reconciler.ts';
import type { MemberAddressing } from './member-addressing.ts';
import type { ClusterGauges } from '../metrics/cluster-gauges.ts';
import {
  defaultOperatorImage,
  managedSelector,
  nameOf,
  namespaceOf,
  ordinalOf,
  tlsSecretNames,
} from './cluster-names.ts';
import { applyClaimRetention, applyClusterObjects } from './cluster-objects.ts';
import { clusterStatus, type Problem } from './cluster-status.ts';
import { ensureGeneratedTls } from './cluster-tls.ts';
import { podImage } from './desired-member-pod.ts';
import {
  assertNoPreviousObjects,
  assertNoRetainedClaims,
  hasRetainedMembers,
} from './earlier-cluster-objects.ts';
import type { KubeMemberRuntimeDeps } from './kube-member-runtime.ts';
import { convergeMembers, maintain, restartMembers, seed, upgradeMembers } from './member-steps.ts';
import { OwnedObjects, ownedKinds } from './owned-objects.ts';
import { RefusedBackups, superviseQuorum, type RecoveryDecision } from './quorum-recovery.ts';
import { Refusal } from './refusal.ts';
import { versionOfImage, type UpgradeOutcome } from './rolling-upgrade.ts';
import { credentialsOf, desiredMembers, endpointsOf, type Round } from './round.ts';
import { judgeVersionChange, type VersionChange } from './version-change.ts';

export interface EtcdClusterControllerOptions {
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
  readonly maxConcurrentReconciles?: number;
  /** The operator's own image: the restore steps of a cluster made from a backup run in it. */
  readonly operatorImage?: string;
  /** The operator's per-cluster gauges, fed from each reconcile's status. */
  readonly gauges?: ClusterGauges;
}

/** Reads etcd through every member that has a pod; undefined (with why) when none answers. */
async function observe(round: Round): Promise<{ health?: ClusterHealth; unreachable?: string }> {
  if (round.connection.endpoints.length === 0) return { unreachable: 'no member pod exists' };
  try {
    return { health: await readClusterHealth(round.connection) };
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

/** Adds the EtcdCluster controller to `manager`. */
export function addEtcdClusterController(
  manager: Manager,
  options: EtcdClusterControllerOptions,
): Controller<EtcdCluster> {
  const owned = new OwnedObjects(manager);
  // The backup-age gauge and disaster recovery (the newest good backup) read the EtcdBackups.
  const backupStore = manager.cache.informer(etcdBackups).store;
  // Backups a disaster recovery found it cannot restore: each is checked and reported once.
  const refusedBackups = new RefusedBackups();
  const healthIntervalMs = options.healthIntervalMs ?? 30_000;
  const stepIntervalMs = options.stepIntervalMs ?? 2000;

  return manager.controller({
    name: 'etcdcluster',
    for: etcdClusters,
    // Everything the operator makes carries its label; a change to any of it wakes the cluster.
    watches: ownedKinds.map((type) =>
      watch({ type, labelSelector: managedSelector, map: mapToLabelledOwner('app.kubernetes.io/instance') }),
    ),
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ namespace, name, object: cluster }, ctx): Promise<ReconcileResult> {
      // Deleted or being deleted: garbage collection removes what it owns (ownerReferences).
      if (!cluster || isBeingDeleted(cluster)) {
        options.gauges?.forget({ namespace: namespace ?? '', name });
        return {};
      }

      const image = imageOf(cluster.spec.version, options.imageRepository) ?? '';
      const deps: KubeMemberRuntimeDeps = {
        cluster,
        client: ctx.client,
        events: ctx.events,
        owned,
        addressing: options.addressing,
        image,
      };
      const desired = await desiredMembers(cluster, options.addressing);

      let problem: Problem | undefined;
      let tlsProblem: Problem | undefined;
      let refusal: Refusal | undefined;
      let step: StepOutcome | undefined;
      let upgrade: UpgradeOutcome | undefined;
      let recovery: RecoveryDecision | undefined;
      let observed: { health?: ClusterHealth; unreachable?: string } = {};
      let versionChange: VersionChange | undefined;
      try {
        if (!image) {
          throw new Refusal('UnknownVersion', `no image for etcd ${cluster.spec.version}`, {
            permanent: true,
          });
        }
        if (!cluster.spec.paused) {
          assertNoPreviousObjects(cluster, owned);
          // Certificates first: no member pod may start without the Secrets it mounts.
          const tls = await ctx.writes.attempt('making the TLS Secrets', () =>
            ensureGeneratedTls(cluster, ctx.client, owned, options.addressing),
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
          if (tls?.caMissing) tlsProblem = { reason: 'CertificateAuthorityMissing', message: tls.caMissing };
        }
        let round: Round = {
          cluster,
          ctx,
          deps,
          desired,
          connection: {
            endpoints: await endpointsOf(cluster, owned, options.addressing),
            callTimeoutMs: options.etcdCallTimeoutMs ?? 5000,
            credentials: await credentialsOf(cluster, ctx, owned),
          },
        };
        // Observation and healing never wait on these (ADR 0603).
        if (!cluster.spec.paused) {
          await applyClusterObjects(round);
          await applyClaimRetention(round);
        }
        observed = await observe(round);
        versionChange = judgeVersionChange(
          cluster.spec.version,
          podVersions(cluster, owned),
          observed.health?.clusterVersion,
          options.imageRepository,
        );
        // A way back etcd would refuse: nothing is rolled, and a member made again meanwhile runs
        // what the others run, not the version its data cannot go back to.
        if (versionChange.kind === 'refused')
          round = { ...round, deps: { ...round.deps, image: versionChange.keepImage } };
        if (!cluster.spec.paused) {
          recovery = await superviseQuorum({
            cluster,
            deps: round.deps,
            events: ctx.events,
            health: observed.health,
            backups: backupStore.list(),
            seedFrom: (backup) => seed(round, options.operatorImage ?? defaultOperatorImage, backup),
            operatorImage: options.operatorImage ?? defaultOperatorImage,
            refused: refusedBackups,
            now: new Date(),
          });
        }
        if (!cluster.spec.paused && !recovery?.inCharge) {
          if (observed.health) step = await convergeMembers(round, observed.health);
          else if (cluster.status?.clusterId) await restartMembers(round);
          else {
            if (cluster.spec.bootstrap?.fromBackup) assertNoRetainedClaims(cluster, owned);
            if (hasRetainedMembers(cluster, owned)) await restartMembers(round);
            else await seed(round, options.operatorImage ?? defaultOperatorImage);
          }
          if (step?.kind === 'converged' && observed.health && versionChange.kind !== 'refused')
            upgrade = await upgradeMembers(round, observed.health);
          if (upgrade?.kind === 'at-version' && observed.health) await maintain(round, observed.health);
        }
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        problem = { reason: error.reason, message: error.message };
        refusal = error;
        // A permanent refusal's Event comes with the PermanentError below; a refused write's with
        // the other refused writes, below.
        if (!error.permanent && !(error.cause instanceof WriteFailure)) {
          await ctx.events.warning(cluster, error.reason, 'Reconcile', error.message);
        }
      }

      problem ??= recovery?.problem;
      if (versionChange?.kind === 'refused' && !problem) {
        const refusedChange = { reason: versionChange.reason, message: versionChange.message };
        // One Event, when Degraded does not say it yet (every reconcile finds it while it lasts).
        if (!conditionMessage(cluster, 'Degraded').includes(refusedChange.message))
          await ctx.events.warning(cluster, refusedChange.reason, 'Upgrade', refusedChange.message);
        problem = refusedChange;
      }
      if (tlsProblem) {
        // One Event, when Degraded does not say it yet (every reconcile finds it while it lasts).
        if (!conditionMessage(cluster, 'Degraded').includes(tlsProblem.message))
          await ctx.events.warning(cluster, tlsProblem.reason, 'Reconcile', tlsProblem.message);
        // Named beside whatever else holds Degraded: a lost CA must not wait for that to clear.
        problem = problem ? { ...problem, message: `${problem.message}; ${tlsProblem.message}` } : tlsProblem;
      }
      // What slows the next look (an engine that cannot go on) is the problem above; refused writes
      // are reported, but the cluster is looked after at the usual pace.
      const engineProblem = problem;
      const refused = ctx.writes.failures;
      if (refused.length) problem ??= refusedWritesProblem(refused);
      await warnRefusedWrites(ctx.events, cluster, refused, conditionMessage(cluster, 'Degraded'));
      // While quorum is lost or a recovery runs, the status as last written (the cache may lag
      // this operator's own last write): what transitions, and their Events, are decided from.
      const latest = recovery?.seen ?? cluster;
      const status = clusterStatus(latest, {
        recovery: recovery ? recovery.status : cluster.status?.recovery,
        desired,
        health: observed.health,
        unreachable: observed.unreachable,
        operatorCutOff: recovery?.operatorCutOff,
        step,
        problem,
        clientEndpoint: options.addressing.clientEndpoint(cluster),
        clientSecret: tlsSecretNames(cluster)?.client,
      });
      options.gauges?.observe(cluster, status);
      // The newest Succeeded EtcdBackup of this cluster, from the cache (the backup controller writes it).
      const lastBackup = newestBackupFinish(backupStore.list(), cluster);
      if (lastBackup) options.gauges?.backupSucceeded(cluster, lastBackup);
      const before = latest.status;
      if (!before?.clusterId && status.clusterId) {
        await ctx.events.normal(
          cluster,
          'ClusterCreated',
          'Create',
          `etcd cluster ${status.clusterId} answers`,
        );
      }
      if (status.phase === 'QuorumLost' && before?.phase !== 'QuorumLost') {
        await ctx.events.warning(
          cluster,
          'QuorumLost',
          'Observe',
          status.conditions?.find((c) => c.type === 'QuorumLost')?.message ?? '',
        );
      }
      await ctx.client.applyStatusIfChanged(
        etcdClusters,
        { metadata: { name, namespace: namespaceOf(cluster) }, status },
        latest,
      );
      // After the status says why: a spec that cannot be carried out waits for a change of it. A
      // refused write is not thrown: it comes back on its own backoff (the controller requeues
      // sooner when it is due), and health is looked at meanwhile as always.
      if (refusal?.permanent) throw new PermanentError(refusal.reason, refusal.message);
      // Membership moves in steps: come back soon while it does, otherwise poll health.
      const busy =
        (step !== undefined && step.kind !== 'converged') ||
        (upgrade !== undefined && upgrade.kind !== 'at-version') ||
        !status.clusterId ||
        !observed.health ||
        // Every member runs a newer minor than etcd's cluster version: etcd moves it within seconds,
        // and until status says so the API server would still let a way back through.
        clusterVersionLags(status);
      const requeueAfterMs = busy && !engineProblem ? stepIntervalMs : healthIntervalMs;
      // A recovery step to follow, or the end of its wait, may come sooner.
      return { requeueAfterMs: Math.min(requeueAfterMs, recovery?.requeueAfterMs ?? requeueAfterMs) };
    },
  });
}

/** Whether the members all run a newer minor than the cluster version status records. */
function clusterVersionLags(status: { currentVersion?: string; clusterVersion?: string }): boolean {
  const { currentVersion, clusterVersion } = status;
  return !!currentVersion && !!clusterVersion && minorOf(currentVersion) !== minorOf(clusterVersion);
}

/** The message of a condition of `cluster` as last written, '' without one. */
function conditionMessage(cluster: EtcdCluster, type: string): string {
  return cluster.status?.conditions?.find((c) => c.type === type)?.message ?? '';
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
