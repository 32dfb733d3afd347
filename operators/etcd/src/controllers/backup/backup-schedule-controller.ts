// Scheduled backups of an EtcdCluster (spec.backup.schedule, keep): at each cron time (UTC) an
// EtcdBackup is created, which the EtcdBackup controller takes; the oldest scheduled ones beyond
// `keep` successful ones are deleted with their stored snapshots (an object in a bucket by the
// operator, a file in a claim by a short-lived pod, claim-prune.ts), each before its EtcdBackup,
// and only where the backup's spec, name and uid say it is (prune-target.ts). A backup a restore
// drill's pod names (it is being restored) is kept until that pod is gone, its verdict recorded;
// the pass after deletes it. Also keeps status.lastSuccessfulBackupTime, which a dashboard or an
// alert reads.
//
// Like a CronJob, it remembers nothing: the schedule's last run is the newest scheduled backup's
// scheduled-at annotation, and each backup's name comes from its scheduled time, so a restarted
// operator neither misses nor repeats one (a run missed while the operator was down is taken
// once, late; older missed runs are skipped). That part is shared with the PostgreSQL operator's
// schedule (@homeostat/operator-kit/schedule).
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  backupsHeldByDrills,
  scheduleDecision,
  scheduledAtOf,
  scheduledName,
} from '@homeostat/operator-kit/schedule';
import {
  AlreadyExistsError,
  NotFoundError,
  builtin,
  mapToLabelledOwner,
  controllerReference,
  watch,
  type Controller,
  type Informer,
  type Manager,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { messageOf } from '../../errors.ts';
import {
  defaultOperatorImage,
  managedSelector,
  memberLabel,
  nameOf,
  namespaceOf,
  ordinalOf,
} from '../cluster-names.ts';
import { backupClusterLabel, scheduledAtAnnotation, scheduledLabel } from './backup-names.ts';
import { openBackupStore } from './backup-store.ts';
import { claimPruneStep } from './claim-prune.ts';
import { drillBackupAnnotation, drillLabel } from './drill-pod.ts';
import { pruneTarget } from './prune-target.ts';

export interface BackupScheduleOptions {
  /**
   * The clock, asked with the copy of the cluster the decision is made from (tests move it forward
   * instead of waiting, and only for a copy that shows they did, so a reconcile holding an older
   * copy cannot take the next run with the spec as it was before).
   */
  readonly now?: (cluster: EtcdCluster) => Date;
  /** The operator's own image: files in a claim are deleted by a pod of it. */
  readonly operatorImage?: string;
  /** How soon retention looks again while a file in a claim is being deleted, in ms (default 2 s). */
  readonly pruneIntervalMs?: number;
}

const scheduledAt = (backup: EtcdBackup): number =>
  scheduledAtOf(backup.metadata?.annotations, scheduledAtAnnotation);

/** The newest finish time of a Succeeded backup of `cluster`, if any. */
function lastSuccess(backups: readonly EtcdBackup[]): string | undefined {
  return backups
    .filter((b) => b.status?.phase === 'Succeeded' && b.status.finishedAt)
    .map((b) => b.status?.finishedAt ?? '')
    .sort()
    .at(-1);
}

/** Scheduled backups to delete: finished ones older than the newest `keep` that succeeded. */
export function prunable(scheduled: readonly EtcdBackup[], keep: number): EtcdBackup[] {
  const newestFirst = [...scheduled].sort((a, b) => scheduledAt(b) - scheduledAt(a));
  let succeeded = 0;
  const drop: EtcdBackup[] = [];
  for (const backup of newestFirst) {
    const phase = backup.status?.phase;
    if (succeeded >= keep && (phase === 'Succeeded' || phase === 'Failed')) drop.push(backup);
    else if (phase === 'Succeeded') succeeded++;
  }
  return drop;
}

/**
 * Whether `claim` holds an etcd member's data: one the operator made for a member (labelled so), or
 * one named as a member's of any EtcdCluster in the namespace would be (`<cluster>-<n>-data`).
 */
function memberClaimTest(
  namespace: string,
  clusters: readonly EtcdCluster[],
  claims: Informer<V1PersistentVolumeClaim>,
): (claim: string) => boolean {
  return (claim) =>
    claims.store.get(`${namespace}/${claim}`)?.metadata?.labels?.[memberLabel] !== undefined ||
    (claim.endsWith('-data') &&
      clusters.some(
        (c) =>
          namespaceOf(c) === namespace && ordinalOf(nameOf(c), claim.slice(0, -'-data'.length)) !== undefined,
      ));
}

/** What became of one scheduled backup beyond retention. */
type Pruned = 'deleted' | 'pending' | 'refused';

/**
 * Deletes one scheduled backup beyond retention: its stored snapshot first, then the EtcdBackup,
 * so a backup is never forgotten while its file is still there. `pending` while the pod that
 * deletes a file in a claim runs (or failed: retried later); `refused` when the snapshot's place
 * cannot be trusted (prune-target.ts): nothing is deleted and the EtcdBackup is kept.
 */
async function prune(
  cluster: EtcdCluster,
  backup: EtcdBackup,
  ctx: ReconcileContext,
  image: string,
  isMemberClaim: (claim: string) => boolean,
): Promise<Pruned> {
  const name = backup.metadata?.name ?? '';
  const target =
    backup.status?.phase === 'Succeeded' ? pruneTarget(backup, cluster, isMemberClaim) : undefined;
  if (target?.kind === 'refused') {
    await ctx.events.warning(
      cluster,
      'BackupPruneRefused',
      'Backup',
      `not deleting the snapshot of scheduled backup ${name}: ${target.message}; nothing deleted and the EtcdBackup kept: find out who changed it, then delete the file and the EtcdBackup by hand`,
    );
    return 'refused';
  }
  if (target?.kind === 'claim') {
    const outcome = await claimPruneStep({ backup, file: target.file, image, client: ctx.client });
    if (outcome.kind === 'running') return 'pending';
    if (outcome.kind === 'gone') return 'deleted';
    if (outcome.kind === 'failed') {
      await ctx.events.warning(
        cluster,
        'BackupPruneFailed',
        'Backup',
        `could not delete ${target.location} of scheduled backup ${name}: ${outcome.message}; EtcdBackup kept, retried later`,
      );
      return 'pending';
    }
  } else if (target?.kind === 's3') {
    const store = await openBackupStore(target.destination, namespaceOf(cluster), ctx.client);
    try {
      await store.delete(store.keyOf(target.key));
    } finally {
      store.close();
    }
  }
  try {
    await ctx.client.delete(etcdBackups, name, namespaceOf(cluster), {
      uid: backup.metadata?.uid ?? '',
    });
  } catch (error) {
    // Deleted by a reconcile whose cache was behind, or by a person: retention is met all the same.
    if (error instanceof NotFoundError) return 'deleted';
    throw error;
  }
  await ctx.events.normal(
    cluster,
    'BackupPruned',
    'Backup',
    `deleted scheduled backup ${name}${target ? ` and ${target.location}` : ''} (keep ${cluster.spec.backup?.keep ?? 0})`,
  );
  return 'deleted';
}

/** Adds the backup schedule controller (a second controller of EtcdClusters) to `manager`. */
export function addBackupScheduleController(
  manager: Manager,
  options: BackupScheduleOptions = {},
): Controller<EtcdCluster> {
  const now = options.now ?? (() => new Date());
  const image = options.operatorImage ?? defaultOperatorImage;
  const backups = manager.cache.informer(etcdBackups);
  const clusters = manager.cache.informer(etcdClusters);
  // The claims the operator made (shared with the cluster controller's cache): member claims among them.
  const claims = manager.cache.informer(builtin.persistentVolumeClaims, { labelSelector: managedSelector });
  // The operator's pods (shared likewise): the restore drills' among them name the backup they restore.
  const pods = manager.cache.informer(builtin.pods, { labelSelector: managedSelector });
  const backupsOf = (cluster: EtcdCluster) =>
    backups.store
      .list()
      .filter(
        (b) => b.metadata?.namespace === namespaceOf(cluster) && b.spec.clusterName === nameOf(cluster),
      );
  return manager.controller({
    name: 'etcdbackupschedule',
    for: etcdClusters,
    watches: [
      // A backup that finishes may move lastSuccessfulBackupTime and retention.
      watch({
        type: etcdBackups,
        map: (b) => [{ namespace: b.metadata?.namespace ?? '', name: b.spec.clusterName }],
      }),
      // A drill that ends releases the backup it restored to retention.
      watch({ type: builtin.pods, labelSelector: managedSelector, map: mapToLabelledOwner(drillLabel) }),
    ],
    async reconcile({ object: cluster }, ctx): Promise<ReconcileResult> {
      if (!cluster || cluster.metadata?.deletionTimestamp) return {};
      const mine = backupsOf(cluster);
      const last = lastSuccess(mine);
      if (last && last !== cluster.status?.lastSuccessfulBackupTime) {
        // A merge patch of this one field: the cluster controller's server-side apply of the rest
        // of status leaves it alone.
        await ctx.client.patchStatus(etcdClusters, nameOf(cluster), namespaceOf(cluster), {
          lastSuccessfulBackupTime: last,
        });
      }
      const backup = cluster.spec.backup;
      if (!backup?.schedule || cluster.spec.paused || !cluster.status?.clusterId) return {};

      const scheduled = mine.filter((b) => b.metadata?.labels?.[scheduledLabel] === 'true');
      let pruning = false;
      const held = backupsHeldByDrills(
        pods.store.list(),
        { clusterLabel: drillLabel, backupAnnotation: drillBackupAnnotation },
        namespaceOf(cluster),
        nameOf(cluster),
      );
      const beyond = prunable(scheduled, backup.keep);
      const drop = beyond.filter((b) => !held.has(b.metadata?.name ?? ''));
      for (const deferred of beyond.filter((b) => held.has(b.metadata?.name ?? ''))) {
        await ctx.events.normal(
          cluster,
          'BackupPruneDeferred',
          'Backup',
          `keeping scheduled backup ${deferred.metadata?.name ?? ''} beyond keep ${backup.keep} for now: a restore drill is restoring it; deleted once the drill has recorded its verdict`,
        );
      }
      if (drop.length > 0) {
        const isMemberClaim = memberClaimTest(namespaceOf(cluster), clusters.store.list(), claims);
        for (const old of drop) {
          if ((await prune(cluster, old, ctx, image, isMemberClaim)) === 'pending') pruning = true;
        }
      }

      const lastRun = Math.max(
        new Date(cluster.metadata?.creationTimestamp ?? 0).getTime() || 0,
        ...scheduled.map(scheduledAt),
      );
      let decision;
      try {
        decision = scheduleDecision(backup.schedule, now(cluster), lastRun);
      } catch (error) {
        await ctx.events.warning(
          cluster,
          'InvalidSchedule',
          'Backup',
          `spec.backup.schedule ${JSON.stringify(backup.schedule)} is not a cron expression: ${messageOf(error)}; no scheduled backups`,
        );
        return {};
      }
      const { due, next } = decision;
      if (due) {
        const name = scheduledName(nameOf(cluster), due);
        try {
          await ctx.client.create(etcdBackups, {
            metadata: {
              name,
              namespace: namespaceOf(cluster),
              labels: { [backupClusterLabel]: nameOf(cluster), [scheduledLabel]: 'true' },
              annotations: { [scheduledAtAnnotation]: due.toISOString() },
              ownerReferences: [controllerReference(cluster)],
            },
            // The destination as it is now, in the immutable spec: the backup is taken there,
            // and read and deleted there later, wherever the cluster's destination has moved.
            spec: { clusterName: nameOf(cluster), destination: backup.destination },
          });
          await ctx.events.normal(
            cluster,
            'ScheduledBackupCreated',
            'Backup',
            `created EtcdBackup ${name} for ${due.toISOString()} (schedule ${JSON.stringify(backup.schedule)})`,
          );
        } catch (error) {
          // Made by an operator that stopped before its cache saw it.
          if (!(error instanceof AlreadyExistsError)) throw error;
        }
      }
      const untilNext = Math.max(1000, next.getTime() - now(cluster).getTime());
      return { requeueAfterMs: pruning ? Math.min(untilNext, options.pruneIntervalMs ?? 2000) : untilNext };
    },
  });
}
