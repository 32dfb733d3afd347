// Scheduled base backups and their retention (spec.backup.schedule, retention; ADR 0216), a second
// controller of PostgreSQLClusters, shaped like the etcd operator's schedule:
//
// - At each cron time (UTC) a PostgreSQLBackup named <cluster>-<yyyymmddhhmm>, labelled scheduled
//   and annotated with its time, target PreferStandby; the PostgreSQLBackup controller takes it.
//   The last run is read back from those annotations (@homeostat/operator-kit/schedule), so a
//   restarted operator neither misses nor repeats a run; a run missed while it was down is taken
//   once, late. A run never starts while the previous scheduled backup is unfinished.
// - After a scheduled backup succeeds, retention once: the scheduled backups the policy lets go
//   (the engine's backupsToExpire; the newest always kept; backups created by hand never) are
//   expired in the repository by a short pod (expire-pod.ts), and only once it ended well are their
//   PostgreSQLBackups deleted. A backup a restore drill's pod names (it is being restored) is kept
//   this time, and expired by the retention after a later scheduled backup. What happened is the Retention condition of that backup, written
//   once: a failure is a Warning and the condition, and waits for the next scheduled backup rather
//   than being retried in a loop.
// - status.backup's lastBackup*, lastScheduledBackup* and nextScheduledBackupTime, by merge patch:
//   the cluster controller's server-side apply of the archive's fields leaves them alone.
import {
  AlreadyExistsError,
  builtin,
  controllerReference,
  isBeingDeleted,
  mapToLabelledOwner,
  NotFoundError,
  setCondition,
  watch,
  type Condition,
  type Controller,
  type Informer,
  type Manager,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import {
  backupsHeldByDrills,
  scheduleDecision,
  scheduledName,
  type ScheduleDecision,
} from '@homeostat/operator-kit/schedule';
import type { V1Pod } from '@kubernetes/client-node';
import { postgresBackups, type PostgresBackup } from '../../api/postgres-backup-types.ts';
import {
  postgresClusters,
  type BackupSpecFields,
  type PostgresCluster,
} from '../../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../../api/postgres-versions.ts';
import {
  desiredExpirePod,
  expirePodLabel,
  expirePodName,
  expirePodSelector,
  expireSetsOf,
} from './expire-pod.ts';
import { drilledBackupAnnotation, drillLabel, drillSelector } from './drill-pod.ts';
import {
  backupClusterLabel,
  isScheduled,
  newestScheduledSuccess,
  retentionCondition,
  retentionDone,
  retentionPlan,
  retentionPolicyOf,
  scheduledAt,
  scheduledAtAnnotation,
  scheduledLabel,
  scheduleStatus,
  unfinishedScheduled,
  type ScheduleStatusFields,
} from './scheduled-backups.ts';

export interface BackupScheduleOptions {
  /** The image of a cluster that sets no spec.image (the operator's default per major version). */
  readonly imageFor: (version: MajorVersion) => string;
  /** The clock (tests move it instead of waiting for the schedule). */
  readonly now?: () => Date;
  /** How soon to look again while retention waits for a pod or a backup, in ms (default 2 s). */
  readonly retentionIntervalMs?: number;
}

type ConditionFields = Omit<Condition, 'type' | 'lastTransitionTime' | 'observedGeneration'>;

/** Records what retention did after `after` on it: the schedule's memory that it ran. */
async function recordRetention(ctx: ReconcileContext, after: PostgresBackup, fields: ConditionFields) {
  const generation = after.metadata?.generation;
  await ctx.client.applyStatusIfChanged(
    postgresBackups,
    {
      metadata: { name: after.metadata?.name ?? '', namespace: after.metadata?.namespace ?? '' },
      status: {
        ...(after.status ?? {}),
        conditions: setCondition(
          after.status?.conditions,
          { type: retentionCondition, ...fields },
          generation,
        ),
      },
    },
    after,
  );
}

/** Deletes a PostgreSQLBackup, that incarnation only; one already gone is as good. */
async function deleteBackup(ctx: ReconcileContext, backup: PostgresBackup): Promise<void> {
  await ctx.client
    .delete(postgresBackups, backup.metadata?.name ?? '', backup.metadata?.namespace ?? '', {
      uid: backup.metadata?.uid ?? '',
    })
    .catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
}

async function deletePod(ctx: ReconcileContext, pod: V1Pod): Promise<void> {
  await ctx.client
    .delete(builtin.pods, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '')
    .catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
}

interface RetentionInput {
  readonly cluster: PostgresCluster;
  readonly backupSpec: BackupSpecFields;
  readonly mine: readonly PostgresBackup[];
  readonly pods: Informer<V1Pod>;
  /** The restore drills' pods: a backup one of them restores is not expired under it. */
  readonly drillPods: Informer<V1Pod>;
  readonly image: string;
  readonly now: Date;
}

/** One step of retention after the newest scheduled success; 'busy' while it waits on something. */
async function retain(ctx: ReconcileContext, input: RetentionInput): Promise<'idle' | 'busy'> {
  const { cluster, mine } = input;
  const clusterName = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? '';
  const scheduled = mine.filter(isScheduled);
  const after = newestScheduledSuccess(scheduled);
  if (!after) return 'idle';
  const pod = input.pods.store.get(`${namespace}/${expirePodName(after)}`);
  if (retentionDone(after)) {
    // Recorded, then the operator stopped before deleting the pod.
    if (pod) await deletePod(ctx, pod);
    return 'idle';
  }
  const held = backupsHeldByDrills(
    input.drillPods.store.list(),
    { clusterLabel: drillLabel, backupAnnotation: drilledBackupAnnotation },
    namespace,
    clusterName,
  );
  const plan = retentionPlan(scheduled, retentionPolicyOf(input.backupSpec.retention), input.now, held);
  const heldNote = (kept: readonly PostgresBackup[]) =>
    kept.length > 0
      ? `; kept ${kept.map((b) => b.metadata?.name ?? '').join(', ')} for now: a restore drill is restoring it, and the retention after a later scheduled backup expires it`
      : '';
  if (!pod) {
    if (plan.expire.length === 0) {
      for (const failed of plan.dropFailed) await deleteBackup(ctx, failed);
      await recordRetention(ctx, after, {
        status: 'True',
        reason: 'NothingToExpire',
        message:
          plan.held.length > 0
            ? `nothing expired${heldNote(plan.held)}`
            : `the retention policy keeps all ${scheduled.filter((b) => b.status?.phase === 'Succeeded').length} scheduled backups`,
      });
      return 'idle';
    }
    // pgBackRest's expire and backup take the same lock on the stanza: one waits for the other.
    if (mine.some((b) => b.status?.phase !== 'Succeeded' && b.status?.phase !== 'Failed')) return 'busy';
    const labels = plan.expire.map((b) => b.status?.label ?? '');
    await ctx.client
      .create(
        builtin.pods,
        desiredExpirePod({ after, cluster, backupSpec: input.backupSpec, image: input.image, labels }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof AlreadyExistsError)) throw error;
      });
    await ctx.events.normal(
      cluster,
      'RetentionStarted',
      'Backup',
      `expiring ${labels.join(', ')} (${plan.expire.map((b) => b.metadata?.name ?? '').join(', ')}) after ${after.metadata?.name ?? ''}${heldNote(plan.held)}`,
    );
    return 'busy';
  }
  const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
  if (pod.status?.phase === 'Succeeded') {
    // The pod's own list is what was expired, whatever the policy says now.
    const expired = new Set(expireSetsOf(pod));
    const gone = mine.filter((b) => isScheduled(b) && expired.has(b.status?.label ?? ''));
    for (const backup of [...gone, ...plan.dropFailed]) await deleteBackup(ctx, backup);
    const message = `expired ${[...expired].join(', ')} from the repository and deleted ${gone.map((b) => b.metadata?.name ?? '').join(', ')} (${terminated?.message?.trim() ?? ''})${heldNote(plan.held.filter((b) => !expired.has(b.status?.label ?? '')))}`;
    await recordRetention(ctx, after, { status: 'True', reason: 'Expired', message });
    await ctx.events.normal(cluster, 'BackupsExpired', 'Backup', message);
    await deletePod(ctx, pod);
    return 'idle';
  }
  if (pod.status?.phase === 'Failed') {
    // The entrypoint's message is pgBackRest's reason with every credential value taken out.
    const reason =
      terminated?.message?.trim() ||
      `the expire pod ${pod.metadata?.name ?? ''} failed (${terminated?.reason ?? pod.status.reason ?? 'no reason given'})`;
    const message = `${reason}; no PostgreSQLBackup deleted; retention runs again after the next scheduled backup of ${clusterName}`;
    await recordRetention(ctx, after, { status: 'False', reason: 'ExpireFailed', message });
    await ctx.events.warning(cluster, 'RetentionFailed', 'Backup', message);
    await deletePod(ctx, pod);
    return 'idle';
  }
  return 'busy';
}

/** status.backup's schedule fields as a merge patch: changed ones set, dropped ones null; undefined when equal. */
function statusPatch(
  cluster: PostgresCluster,
  wanted: ScheduleStatusFields,
): Record<string, string | null> | undefined {
  const live = cluster.status?.backup ?? {};
  const keys = [
    'lastBackupTime',
    'lastBackupLabel',
    'lastScheduledBackup',
    'lastScheduledBackupTime',
    'nextScheduledBackupTime',
  ] as const;
  const patch: Record<string, string | null> = {};
  for (const key of keys) {
    if (wanted[key] !== live[key]) patch[key] = wanted[key] ?? null;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** Adds the backup schedule controller (a second controller of PostgreSQLClusters) to `manager`. */
export function addBackupScheduleController(
  manager: Manager,
  options: BackupScheduleOptions,
): Controller<PostgresCluster> {
  const now = options.now ?? (() => new Date());
  const backups = manager.cache.informer(postgresBackups);
  const pods = manager.cache.informer(builtin.pods, { labelSelector: expirePodSelector });
  const drillPods = manager.cache.informer(builtin.pods, { labelSelector: drillSelector });
  const backupsOf = (cluster: PostgresCluster) =>
    backups.store
      .list()
      .filter(
        (b) =>
          b.metadata?.namespace === cluster.metadata?.namespace &&
          b.spec.clusterName === cluster.metadata?.name &&
          !isBeingDeleted(b),
      );
  return manager.controller({
    name: 'postgresqlbackupschedule',
    for: postgresClusters,
    watches: [
      // A backup that finishes moves the status, starts retention, or lets the next run start.
      watch({
        type: postgresBackups,
        map: (b) => [{ namespace: b.metadata?.namespace ?? '', name: b.spec.clusterName }],
      }),
      watch({
        type: builtin.pods,
        labelSelector: expirePodSelector,
        map: mapToLabelledOwner(expirePodLabel),
      }),
    ],
    async reconcile({ object: cluster }, ctx): Promise<ReconcileResult> {
      if (!cluster || isBeingDeleted(cluster)) return {};
      const clusterName = cluster.metadata?.name ?? '';
      const namespace = cluster.metadata?.namespace ?? '';
      const mine = backupsOf(cluster);
      const scheduled = mine.filter(isScheduled);
      const backupSpec = cluster.spec.backup;
      const schedule = backupSpec?.schedule;

      let decision: ScheduleDecision | undefined;
      if (schedule) {
        const lastRun = Math.max(
          new Date(cluster.metadata?.creationTimestamp ?? 0).getTime() || 0,
          ...scheduled.map(scheduledAt),
        );
        try {
          decision = scheduleDecision(schedule, now(), lastRun);
        } catch (error) {
          await ctx.events.warning(
            cluster,
            'InvalidSchedule',
            'Backup',
            `spec.backup.schedule ${JSON.stringify(schedule)} is not a cron expression: ${error instanceof Error ? error.message : String(error)}; no scheduled backups`,
          );
        }
      }
      const patch = statusPatch(cluster, scheduleStatus(mine, decision?.next));
      if (patch) {
        await ctx.client.patchStatus(postgresClusters, clusterName, namespace, { backup: patch });
      }
      if (!backupSpec) return {};

      const image = cluster.spec.image ?? options.imageFor(cluster.spec.postgresVersion);
      const retention = await retain(ctx, { cluster, backupSpec, mine, pods, drillPods, image, now: now() });
      const retryMs = options.retentionIntervalMs ?? 2000;
      if (!decision) return retention === 'busy' ? { requeueAfterMs: retryMs } : {};

      // Never two scheduled backups at once, nor a backup beside an expire: the run waits, and is
      // taken once what runs has finished (late, once).
      if (decision.due && retention === 'idle' && !unfinishedScheduled(scheduled)) {
        const name = scheduledName(clusterName, decision.due);
        try {
          await ctx.client.create(postgresBackups, {
            metadata: {
              name,
              namespace,
              labels: { [backupClusterLabel]: clusterName, [scheduledLabel]: 'true' },
              annotations: { [scheduledAtAnnotation]: decision.due.toISOString() },
              ownerReferences: [controllerReference(cluster)],
            },
            spec: { clusterName, target: 'PreferStandby' },
          });
          await ctx.events.normal(
            cluster,
            'ScheduledBackupCreated',
            'Backup',
            `created PostgreSQLBackup ${name} for ${decision.due.toISOString()} (schedule ${JSON.stringify(schedule)})`,
          );
        } catch (error) {
          // Made by an operator that stopped before its cache saw it.
          if (!(error instanceof AlreadyExistsError)) throw error;
        }
      }
      const untilNext = Math.max(1000, decision.next.getTime() - now().getTime());
      return { requeueAfterMs: retention === 'busy' ? Math.min(untilNext, retryMs) : untilNext };
    },
  });
}
