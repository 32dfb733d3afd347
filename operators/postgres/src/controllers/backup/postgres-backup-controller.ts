// The PostgreSQLBackup reconciler (ADR 0215): takes one full base backup of a cluster with spec.backup,
// in a pod of the cluster's image (backup-pod.ts), and records the backup pgBackRest reports.
//
// Crash safety: the pod is named after the PostgreSQLBackup's uid and owned by it. An operator that
// dies at any step finds it again: not made yet, it is made (status Running says nothing of a
// pod); running, it is waited for; finished, its termination message is read. A pod that vanished
// while the backup was Running (its node lost) is made again: pgBackRest leaves an unfinished
// backup unlisted, so no half backup is ever reported. A finished backup's pod is deleted.
import {
  AlreadyExistsError,
  builtin,
  isBeingDeleted,
  mapToLabelledOwner,
  NotFoundError,
  setCondition,
  watch,
  type Condition,
  type Controller,
  type KubeClient,
  type Manager,
  type ObjectKey,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import type { V1Pod } from '@kubernetes/client-node';
import {
  backupConditionTypes,
  postgresBackups,
  type PostgresBackup,
  type PostgresBackupStatusFields,
} from '../../api/postgres-backup-types.ts';
import { postgresClusters, type PostgresCluster } from '../../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../../api/postgres-versions.ts';
import { parseRepositoryInfo, type BackupRecord } from '../../backup/repository-info.ts';
import { formatLsn } from '../../instance/lsn.ts';
import { stanzaOf } from '../desired-backup.ts';
import { ensureBackupClientCertificate } from './backup-client-tls.ts';
import { backupPodLabel, backupPodName, backupPodSelector, desiredBackupPod } from './backup-pod.ts';
import { isScheduled } from './scheduled-backups.ts';

export interface PostgresBackupControllerOptions {
  /** The image of a cluster that sets no spec.image (the operator's default per major version). */
  readonly imageFor: (version: MajorVersion) => string;
  /** How soon a backup waiting for its cluster looks again, in ms (default 5 s). */
  readonly waitIntervalMs?: number;
  readonly maxConcurrentReconciles?: number;
}

/** A backup that cannot be taken; becomes phase Failed, condition Failed and a Warning Event. */
class BackupFailure extends Error {
  override readonly name = 'BackupFailure';
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

type ConditionFields = Omit<Condition, 'type' | 'lastTransitionTime' | 'observedGeneration'>;

async function writeStatus(
  client: KubeClient,
  backup: PostgresBackup,
  status: Omit<PostgresBackupStatusFields, 'conditions' | 'observedGeneration'>,
  complete: ConditionFields,
  failed: ConditionFields,
): Promise<void> {
  const generation = backup.metadata?.generation;
  let conditions = setCondition(
    backup.status?.conditions,
    { type: backupConditionTypes.complete, ...complete },
    generation,
  );
  conditions = setCondition(conditions, { type: backupConditionTypes.failed, ...failed }, generation);
  await client.applyStatusIfChanged(
    postgresBackups,
    {
      metadata: { name: backup.metadata?.name ?? '', namespace: backup.metadata?.namespace ?? '' },
      status: {
        ...status,
        ...(generation === undefined ? {} : { observedGeneration: generation }),
        conditions,
      },
    },
    backup,
  );
}

/** The status fields of a backup pgBackRest reports. */
function recordedFields(record: BackupRecord): Partial<PostgresBackupStatusFields> {
  return {
    label: record.label,
    type: record.type,
    startedAt: record.startTime.toISOString(),
    finishedAt: record.stopTime.toISOString(),
    beginLsn: formatLsn(record.beginLsn),
    endLsn: formatLsn(record.endLsn),
    beginWal: record.walStart,
    endWal: record.walStop,
    databaseBytes: record.databaseBytes,
    storedBytes: record.storedBytes,
    toolVersion: record.toolVersion,
  };
}

/** The backup in a finished pod's termination message (`pgbackrest info --set` of it). */
function recordOf(pod: V1Pod, cluster: PostgresCluster): BackupRecord {
  const message = pod.status?.containerStatuses?.[0]?.state?.terminated?.message ?? '';
  let record: BackupRecord | undefined;
  try {
    record = parseRepositoryInfo(message, stanzaOf(cluster)).backups[0];
  } catch (error) {
    throw new BackupFailure(
      'UnreadableRecord',
      `the backup pod ${pod.metadata?.name ?? ''} ended well but its record could not be read: ${String(error)}`,
    );
  }
  if (!record) {
    throw new BackupFailure(
      'UnreadableRecord',
      `the backup pod ${pod.metadata?.name ?? ''} ended well but reported no backup`,
    );
  }
  return record;
}

/** Where the files are read: a streaming standby when one is there and wanted, else the primary. */
function sourceOf(backup: PostgresBackup, cluster: PostgresCluster) {
  const instances = cluster.status?.instanceStatuses ?? [];
  const primary = instances.find((i) => i.role === 'primary' && i.ready);
  if (!primary) return undefined;
  const standbys = instances.filter((i) => i.role === 'replica' && i.ready).map((i) => i.name);
  const fromStandby = backup.spec.target === 'PreferStandby' && standbys.length > 0;
  // The primary starts and stops the backup either way; only the standbys that stream are named,
  // so the tool never waits on an instance that cannot answer.
  return { fromStandby, instances: fromStandby ? [primary.name, ...standbys] : [primary.name] };
}

async function take(
  backup: PostgresBackup,
  ctx: ReconcileContext,
  pod: V1Pod | undefined,
  options: PostgresBackupControllerOptions,
): Promise<ReconcileResult> {
  const namespace = backup.metadata?.namespace ?? '';
  const clusterName = backup.spec.clusterName;
  const cluster = ctx.cache.get(postgresClusters, clusterName, namespace);
  if (!cluster || isBeingDeleted(cluster)) {
    throw new BackupFailure(
      'ClusterNotFound',
      `PostgreSQLCluster ${clusterName} does not exist in namespace ${namespace}`,
    );
  }
  const recordedUid = backup.status?.clusterUid;
  if (recordedUid && recordedUid !== cluster.metadata?.uid) {
    throw new BackupFailure(
      'ClusterReplaced',
      `PostgreSQLCluster ${clusterName} was deleted and made again while its backup ran; create a new PostgreSQLBackup`,
    );
  }
  const backupSpec = cluster.spec.backup;
  if (!backupSpec) {
    throw new BackupFailure(
      'BackupNotConfigured',
      `PostgreSQLCluster ${clusterName} sets no spec.backup: a base backup goes to the repository its WAL is archived to; set spec.backup.destination first`,
    );
  }

  const phase = pod?.status?.phase;
  if (pod && phase === 'Succeeded') {
    const record = recordOf(pod, cluster);
    const done = new Date().toISOString();
    await writeStatus(
      ctx.client,
      backup,
      { ...(backup.status ?? {}), ...recordedFields(record), phase: 'Succeeded' },
      {
        status: 'True',
        reason: 'BackupComplete',
        message: `backup ${record.label} is in the repository with the WAL it needs (from ${formatLsn(record.beginLsn)} to ${formatLsn(record.endLsn)})`,
      },
      { status: 'False', reason: 'BackupComplete', message: `completed at ${done}` },
    );
    await ctx.events.normal(
      backup,
      'BackupCompleted',
      'Backup',
      `backup ${record.label} of ${clusterName} taken from the ${backup.status?.source === 'Standby' ? 'standby' : 'primary'}: ${record.databaseBytes} bytes, ${record.storedBytes} stored`,
    );
    await deletePod(ctx, pod);
    return {};
  }
  if (pod && phase === 'Failed') {
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    throw new BackupFailure(
      'BackupFailed',
      terminated?.message?.trim() ||
        `the backup pod ${pod.metadata?.name ?? ''} failed (${terminated?.reason ?? pod.status?.reason ?? 'no reason given'})`,
    );
  }
  if (pod) return {}; // running: its end wakes this backup

  const waitMs = options.waitIntervalMs ?? 5000;
  const pending = async (message: string): Promise<ReconcileResult> => {
    await writeStatus(
      ctx.client,
      backup,
      { ...(backup.status ?? {}), phase: backup.status?.phase === 'Running' ? 'Running' : 'Pending' },
      { status: 'False', reason: 'Waiting', message },
      { status: 'False', reason: 'Waiting', message },
    );
    return { requeueAfterMs: waitMs };
  };
  const source = sourceOf(backup, cluster);
  if (!source) return pending(`waiting for PostgreSQLCluster ${clusterName} to have a ready primary`);
  if (!(await ensureBackupClientCertificate(cluster, ctx.client))) {
    return pending(`waiting for the CA of PostgreSQLCluster ${clusterName} (Secret ${clusterName}-ca)`);
  }
  const image = cluster.spec.image ?? options.imageFor(cluster.spec.postgresVersion);
  const wanted = desiredBackupPod({ backup, cluster, backupSpec, image, ...source });
  await ctx.client.create(builtin.pods, wanted).catch((error: unknown) => {
    if (!(error instanceof AlreadyExistsError)) throw error;
  });
  const from = source.fromStandby ? 'Standby' : 'Primary';
  await writeStatus(
    ctx.client,
    backup,
    { ...(backup.status ?? {}), phase: 'Running', clusterUid: cluster.metadata?.uid ?? '', source: from },
    {
      status: 'False',
      reason: 'Running',
      message: `pod ${wanted.metadata?.name ?? ''} is taking the backup`,
    },
    {
      status: 'False',
      reason: 'Running',
      message: `pod ${wanted.metadata?.name ?? ''} is taking the backup`,
    },
  );
  if (backup.status?.phase !== 'Running') {
    await ctx.events.normal(
      backup,
      'BackupStarted',
      'Backup',
      `taking a full backup of ${clusterName} from the ${from === 'Standby' ? 'standby' : 'primary'} in pod ${wanted.metadata?.name ?? ''}`,
    );
  }
  return {};
}

async function deletePod(ctx: ReconcileContext, pod: V1Pod): Promise<void> {
  await ctx.client
    .delete(builtin.pods, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '')
    .catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
}

/** Adds the PostgreSQLBackup controller to `manager`. */
export function addPostgresBackupController(
  manager: Manager,
  options: PostgresBackupControllerOptions,
): Controller<PostgresBackup> {
  const backups = manager.cache.informer(postgresBackups);
  const pods = manager.cache.informer(builtin.pods, { labelSelector: backupPodSelector });
  const finished = (b: PostgresBackup | undefined) =>
    b?.status?.phase === 'Succeeded' || b?.status?.phase === 'Failed';
  return manager.controller({
    name: 'postgresqlbackup',
    for: postgresBackups,
    watches: [
      watch({
        type: builtin.pods,
        labelSelector: backupPodSelector,
        map: mapToLabelledOwner(backupPodLabel),
      }),
      // A backup waiting for its cluster wakes when the cluster changes (a primary becomes ready).
      watch({ type: postgresClusters, map: (cluster) => unfinishedBackupsOf(backups.store.list(), cluster) }),
    ],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ object: cached }, ctx): Promise<ReconcileResult> {
      if (!cached || isBeingDeleted(cached)) return {};
      const podOf = (b: PostgresBackup) =>
        pods.store.get(`${b.metadata?.namespace ?? ''}/${backupPodName(b)}`);
      if (finished(cached)) {
        // The record is kept; the pod that took it is not.
        const pod = podOf(cached);
        if (pod) await deletePod(ctx, pod);
        return {};
      }
      // Read again from the API server: the cache may not show yet the Succeeded this operator has
      // just written, and a finished backup would be taken twice.
      const backup = await ctx.client.find(
        postgresBackups,
        cached.metadata?.name ?? '',
        cached.metadata?.namespace,
      );
      if (!backup || finished(backup)) return {};
      const pod = podOf(backup);
      try {
        return await take(backup, ctx, pod, options);
      } catch (error) {
        if (!(error instanceof BackupFailure)) throw error;
        await writeStatus(
          ctx.client,
          backup,
          { ...(backup.status ?? {}), phase: 'Failed', finishedAt: new Date().toISOString() },
          { status: 'False', reason: error.reason, message: error.message },
          { status: 'True', reason: error.reason, message: error.message },
        );
        await ctx.events.warning(backup, error.reason, 'Backup', error.message);
        // A scheduled backup's failure is also the cluster's: no one watches objects nobody created.
        const cluster = ctx.cache.get(
          postgresClusters,
          backup.spec.clusterName,
          backup.metadata?.namespace ?? '',
        );
        if (cluster && isScheduled(backup)) {
          await ctx.events.warning(
            cluster,
            'ScheduledBackupFailed',
            'Backup',
            `scheduled backup ${backup.metadata?.name ?? ''} failed: ${error.message}`,
          );
        }
        if (pod) await deletePod(ctx, pod);
        return {};
      }
    },
  });
}

/** The backups of `cluster` not finished yet, as keys to reconcile. */
function unfinishedBackupsOf(backups: readonly PostgresBackup[], cluster: PostgresCluster): ObjectKey[] {
  return backups
    .filter(
      (b) =>
        b.metadata?.namespace === cluster.metadata?.namespace &&
        b.spec.clusterName === cluster.metadata?.name &&
        b.status?.phase !== 'Succeeded' &&
        b.status?.phase !== 'Failed',
    )
    .map((b) => ({ namespace: b.metadata?.namespace ?? '', name: b.metadata?.name ?? '' }));
}
