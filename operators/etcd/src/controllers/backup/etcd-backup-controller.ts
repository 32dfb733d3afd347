// The EtcdBackup reconciler: takes the snapshot once, streams it to the destination, and records
// where it is. The operator itself streams (etcd's Snapshot RPC to an S3 multipart upload), so a
// backup needs no pod. A backup is committed only after etcd's sha256 trailer checks (the engine's
// takeBackup); the status then says where it is, its size, hash and revision.
//
// Crash safety: status says Running before the first byte is sent, and the object key is fixed by
// the EtcdBackup (name and uid). An operator that dies mid-stream leaves an unfinished multipart
// upload that no reader sees; the next operator finds the backup Running, aborts that upload and
// takes the snapshot again to the same key, so there is never a second committed object.
import {
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
import { backupConditionTypes, etcdBackups, type EtcdBackup } from '../../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { takeBackup } from '../../backup/take-backup.ts';
import type { EtcdConnection } from '../../connection.ts';
import { EtcdEngineError, messageOf } from '../../errors.ts';
import { S3CallError } from '../../backup/s3-failure.ts';
import { defaultOperatorImage, namespaceOf } from '../cluster-names.ts';
import { clientCredentials } from '../cluster-tls.ts';
import type { MemberAddressing } from '../member-addressing.ts';
import { OwnedObjects } from '../owned-objects.ts';
import { DestinationError, openBackupStore, type BackupDestination } from './backup-store.ts';
import { claimBackupStep, claimLocation } from './claim-backup.ts';
import { backupObjectName } from './backup-names.ts';

export interface EtcdBackupControllerOptions {
  readonly addressing: MemberAddressing;
  /** Deadline of each unary call to etcd, in ms (default 5000). */
  readonly etcdCallTimeoutMs?: number;
  /** How soon a backup waiting for its cluster looks again, in ms (default 5 s). */
  readonly waitIntervalMs?: number;
  readonly maxConcurrentReconciles?: number;
  /** The operator's own image: a backup into a claim runs in a pod of it. */
  readonly operatorImage?: string;
}

type Status = NonNullable<EtcdBackup['status']>;

/** A backup that cannot be taken; becomes phase Failed, condition Failed and a Warning Event. */
class BackupFailure extends Error {
  override readonly name = 'BackupFailure';
  /** The condition and Event reason (CamelCase). */
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

function withConditions(
  backup: EtcdBackup,
  status: Omit<Status, 'conditions' | 'observedGeneration'>,
  complete: Omit<Condition, 'type' | 'lastTransitionTime' | 'observedGeneration'>,
  failed: Omit<Condition, 'type' | 'lastTransitionTime' | 'observedGeneration'>,
): Status {
  const generation = backup.metadata?.generation;
  let conditions = setCondition(
    backup.status?.conditions,
    { type: backupConditionTypes.complete, ...complete },
    generation,
  );
  conditions = setCondition(conditions, { type: backupConditionTypes.failed, ...failed }, generation);
  return { ...status, ...(generation === undefined ? {} : { observedGeneration: generation }), conditions };
}

async function writeStatus(client: KubeClient, backup: EtcdBackup, status: Status): Promise<void> {
  await client.applyStatusIfChanged(
    etcdBackups,
    { metadata: { name: backup.metadata?.name ?? '', namespace: backup.metadata?.namespace ?? '' }, status },
    backup,
  );
}

/** How the operator reaches the cluster's members (their client URLs, its client certificate). */
async function connectionTo(
  cluster: EtcdCluster,
  client: KubeClient,
  owned: OwnedObjects,
  options: EtcdBackupControllerOptions,
): Promise<EtcdConnection> {
  const members = (cluster.status?.members ?? []).filter((m) => m.ready).map((m) => m.name);
  return {
    endpoints: await Promise.all(
      members.map(async (m) => (await options.addressing.urls(cluster, m)).clientUrl),
    ),
    callTimeoutMs: options.etcdCallTimeoutMs ?? 5000,
    credentials: await clientCredentials(cluster, client, owned),
  };
}

/** The cluster to back up, once it has a ready member; a BackupFailure when it cannot be backed up. */
async function clusterOf(backup: EtcdBackup, ctx: ReconcileContext): Promise<EtcdCluster | undefined> {
  const namespace = backup.metadata?.namespace ?? '';
  const cluster = ctx.cache.get(etcdClusters, backup.spec.clusterName, namespace);
  if (!cluster) {
    throw new BackupFailure(
      'ClusterNotFound',
      `EtcdCluster ${backup.spec.clusterName} does not exist in namespace ${namespace}`,
    );
  }
  if (!cluster.status?.clusterId || !cluster.status.members?.some((m) => m.ready)) return undefined;
  return cluster;
}

/**
 * Where a backup is written and of which cluster, recorded with it: restores, recovery and
 * retention read the backup where it was written, not where the cluster's spec points today, and
 * recovery restores only backups of this very EtcdCluster (its uid), not of an earlier one of the
 * same name.
 */
interface Origin {
  readonly destination: BackupDestination;
  readonly clusterUid: string;
  readonly etcdClusterId?: string;
}

function originOf(cluster: EtcdCluster, destination: BackupDestination): Origin {
  return {
    destination,
    clusterUid: cluster.metadata?.uid ?? '',
    ...(cluster.status?.clusterId ? { etcdClusterId: cluster.status.clusterId } : {}),
  };
}

async function recordRunning(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  where: Origin & { startedAt: string; location: string; key: string },
): Promise<void> {
  await writeStatus(
    ctx.client,
    backup,
    withConditions(
      backup,
      { phase: 'Running', ...where },
      { status: 'False', reason: 'Running', message: 'streaming the snapshot' },
      { status: 'False', reason: 'Running', message: '' },
    ),
  );
}

/** What a finished backup records, from the engine's record (S3) or the backup pod's (claim). */
interface Taken extends Origin {
  readonly location: string;
  readonly key: string;
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly revision: string;
  readonly hashKV?: string | undefined;
  readonly compactRevision?: string | undefined;
  readonly etcdVersion: string;
  readonly memberName: string;
  readonly startedAt: string;
  readonly finishedAt: string;
}

async function recordSuccess(ctx: ReconcileContext, backup: EtcdBackup, taken: Taken): Promise<void> {
  await writeStatus(
    ctx.client,
    backup,
    withConditions(
      backup,
      {
        phase: 'Succeeded',
        location: taken.location,
        key: taken.key,
        destination: taken.destination,
        clusterUid: taken.clusterUid,
        ...(taken.etcdClusterId ? { etcdClusterId: taken.etcdClusterId } : {}),
        sizeBytes: taken.sizeBytes,
        sha256: taken.sha256,
        revision: taken.revision,
        ...(taken.hashKV ? { hashKV: taken.hashKV } : {}),
        ...(taken.compactRevision ? { compactRevision: taken.compactRevision } : {}),
        etcdVersion: taken.etcdVersion,
        member: taken.memberName,
        startedAt: taken.startedAt,
        finishedAt: taken.finishedAt,
      },
      {
        status: 'True',
        reason: 'SnapshotVerified',
        message: `${taken.sizeBytes} bytes from ${taken.memberName}, sha256 trailer checked`,
      },
      { status: 'False', reason: 'SnapshotVerified', message: '' },
    ),
  );
  await ctx.events.normal(
    backup,
    'BackupSucceeded',
    'Backup',
    `${taken.location}: ${taken.sizeBytes} bytes, revision ${taken.revision}, sha256 ${taken.sha256}`,
  );
}

/** A backup into a claim: a pod of the operator image writes it (claim-backup.ts). */
async function takeOnClaim(
  backup: EtcdBackup,
  cluster: EtcdCluster,
  claim: NonNullable<BackupDestination['persistentVolumeClaim']>,
  ctx: ReconcileContext,
  owned: OwnedObjects,
  options: EtcdBackupControllerOptions,
): Promise<ReconcileResult> {
  const { key, location } = claimLocation(backup, claim);
  const startedAt = backup.status?.startedAt ?? new Date().toISOString();
  const origin = originOf(cluster, { persistentVolumeClaim: claim });
  if (backup.status?.phase !== 'Running') {
    await recordRunning(ctx, backup, { ...origin, startedAt, location, key });
  }
  const connection = await connectionTo(cluster, ctx.client, owned, options);
  const outcome = await claimBackupStep({
    backup,
    cluster,
    claim,
    endpoints: connection.endpoints,
    image: options.operatorImage ?? defaultOperatorImage,
    client: ctx.client,
  });
  if (outcome.kind === 'failed') throw new BackupFailure('BackupPodFailed', outcome.message);
  if (outcome.kind !== 'succeeded') return { requeueAfterMs: options.waitIntervalMs ?? 5000 };
  await recordSuccess(ctx, backup, { ...outcome.record, ...origin, location, key, startedAt });
  return {};
}

async function take(
  backup: EtcdBackup,
  ctx: ReconcileContext,
  owned: OwnedObjects,
  options: EtcdBackupControllerOptions,
): Promise<ReconcileResult> {
  const namespace = backup.metadata?.namespace ?? '';
  const cluster = await clusterOf(backup, ctx);
  if (!cluster) {
    await writeStatus(
      ctx.client,
      backup,
      withConditions(
        backup,
        { phase: 'Pending' },
        {
          status: 'False',
          reason: 'WaitingForCluster',
          message: `EtcdCluster ${backup.spec.clusterName} has no ready member yet`,
        },
        { status: 'False', reason: 'WaitingForCluster', message: '' },
      ),
    );
    return { requeueAfterMs: options.waitIntervalMs ?? 5000 };
  }
  const destination = backup.spec.destination ?? cluster.spec.backup?.destination;
  if (!destination) {
    throw new BackupFailure(
      'NoDestination',
      `neither this EtcdBackup nor EtcdCluster ${namespaceOf(cluster)}/${backup.spec.clusterName} names a destination (spec.backup.destination)`,
    );
  }
  if (destination.persistentVolumeClaim) {
    return takeOnClaim(backup, cluster, destination.persistentVolumeClaim, ctx, owned, options);
  }
  let store;
  try {
    store = await openBackupStore(destination, namespace, ctx.client);
  } catch (error) {
    if (error instanceof DestinationError) throw new BackupFailure(error.reason, error.message);
    throw error;
  }
  try {
    const name = backupObjectName(backup);
    const startedAt = backup.status?.startedAt ?? new Date().toISOString();
    if (backup.status?.phase === 'Running') {
      // An operator stopped while this backup streamed: throw its unfinished upload away.
      const aborted = await store.abortUnfinished(store.keyOf(name));
      await ctx.events.normal(
        backup,
        'BackupRestarted',
        'Backup',
        `the backup was interrupted (operator restarted); ${aborted} unfinished upload(s) discarded, taking it again`,
      );
    } else {
      await recordRunning(ctx, backup, {
        ...originOf(cluster, destination),
        startedAt,
        location: store.locationOf(name),
        key: name,
      });
    }
    const connection = await connectionTo(cluster, ctx.client, owned, options);
    let record;
    try {
      // No local file in an object store to read the revision from: it is the one read just before
      // the stream starts, a lower bound of the snapshot's (status.revision says so).
      record = await takeBackup(connection, store, { name, signal: ctx.signal });
    } catch (error) {
      // Stopped (shutdown past its deadline, or leadership lost): nothing is recorded; the next
      // leader finds the backup Running and takes it again.
      if (ctx.signal.aborted) throw error;
      if (error instanceof EtcdEngineError) throw new BackupFailure(error.reason, error.message);
      // An S3 call's failure names its object already, and repeats nothing the endpoint said.
      if (error instanceof S3CallError) throw new BackupFailure('UploadFailed', error.message);
      throw new BackupFailure('UploadFailed', `${store.locationOf(name)}: ${messageOf(error)}`);
    }
    await recordSuccess(ctx, backup, { ...record, ...originOf(cluster, destination), key: name, startedAt });
    return {};
  } finally {
    store.close();
  }
}

/** Adds the EtcdBackup controller to `manager`. */
export function addEtcdBackupController(
  manager: Manager,
  options: EtcdBackupControllerOptions,
): Controller<EtcdBackup> {
  const owned = new OwnedObjects(manager);
  const backups = manager.cache.informer(etcdBackups);
  return manager.controller({
    name: 'etcdbackup',
    for: etcdBackups,
    // A backup waiting for its cluster wakes when the cluster changes (its members become ready).
    watches: [
      watch({ type: etcdClusters, map: (cluster) => unfinishedBackupsOf(backups.store.list(), cluster) }),
    ],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ object: cached }, ctx): Promise<ReconcileResult> {
      const finished = (b: EtcdBackup | undefined) =>
        !b ||
        b.metadata?.deletionTimestamp ||
        b.status?.phase === 'Succeeded' ||
        b.status?.phase === 'Failed';
      // Taken once: a finished backup is never looked at again.
      if (finished(cached)) return {};
      // Read again from the API server: the cache may not show yet the Succeeded this operator has
      // just written, and a Running backup would look interrupted and be taken twice.
      const backup = await ctx.client.find(
        etcdBackups,
        cached?.metadata?.name ?? '',
        cached?.metadata?.namespace,
      );
      if (!backup || finished(backup)) return {};
      try {
        return await take(backup, ctx, owned, options);
      } catch (error) {
        if (!(error instanceof BackupFailure)) throw error;
        await writeStatus(
          ctx.client,
          backup,
          withConditions(
            backup,
            {
              ...(backup.status ?? {}),
              phase: 'Failed',
              finishedAt: new Date().toISOString(),
            },
            { status: 'False', reason: error.reason, message: error.message },
            { status: 'True', reason: error.reason, message: error.message },
          ),
        );
        await ctx.events.warning(backup, error.reason, 'Backup', error.message);
        return {};
      }
    },
  });
}

/** The backups of `cluster` not finished yet, as keys to reconcile. */
function unfinishedBackupsOf(backups: readonly EtcdBackup[], cluster: EtcdCluster): ObjectKey[] {
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
