// Which backup a new cluster starts from (bootstrap.fromBackup), and the check made before any
// member exists: the snapshot is read once from the bucket through the sha256 trailer check (and
// compared with the recorded sha256), so a corrupted or swapped backup is refused with a condition
// and an Event, and nothing is created.
import type { KubeClient } from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { SnapshotTrailerVerifier, type VerifiedSnapshot } from '../../backup/snapshot-trailer.ts';
import { EtcdEngineError, messageOf } from '../../errors.ts';
import { namespaceOf } from '../cluster-names.ts';
import { DestinationError, openBackupStore, type BackupDestination } from './backup-store.ts';

type S3Destination = NonNullable<BackupDestination['s3']>;

/** A backup to restore: its bucket, its object key there, and the sha256 it must have. */
export interface RestoreSource {
  readonly s3: S3Destination;
  /** Object key in the bucket, prefix included. */
  readonly key: string;
  readonly sha256: string | undefined;
  /** For messages: `s3://bucket/key` (and the EtcdBackup it came from). */
  readonly describe: string;
}

/** Why a restore cannot start; `reason` becomes the condition reason. */
export class RestoreRefusal extends Error {
  override readonly name = 'RestoreRefusal';
  readonly reason: string;
  /** Only a new spec helps (a corrupt backup, an unsupported destination); otherwise it may pass. */
  readonly permanent: boolean;
  constructor(reason: string, message: string, permanent = false) {
    super(message);
    this.reason = reason;
    this.permanent = permanent;
  }
}

function s3Of(destination: BackupDestination | undefined, what: string): S3Destination {
  if (!destination) {
    throw new RestoreRefusal('BackupNotFound', `${what} names no destination; use fromBackup.location`);
  }
  if (!destination.s3) {
    throw new RestoreRefusal(
      'DestinationNotSupported',
      `${what}: restoring from a persistentVolumeClaim is not carried out by this version of the operator yet; use s3`,
      true,
    );
  }
  return destination.s3;
}

/** Resolves bootstrap.fromBackup to a location; undefined when the cluster is not restored from one. */
export async function restoreSourceOf(
  cluster: EtcdCluster,
  client: KubeClient,
): Promise<RestoreSource | undefined> {
  const from = cluster.spec.bootstrap?.fromBackup;
  if (!from) return undefined;
  const namespace = namespaceOf(cluster);
  if (from.location) {
    const s3 = s3Of(from.location.destination, 'fromBackup.location');
    const key = `${s3.prefix ?? ''}${from.location.key}`;
    return { s3, key, sha256: from.location.sha256, describe: `s3://${s3.bucket}/${key}` };
  }
  const name = from.backupName ?? '';
  const backup = await client.find(etcdBackups, name, namespace);
  if (!backup) throw new RestoreRefusal('BackupNotFound', `EtcdBackup ${name} does not exist`);
  return restoreSourceOfBackup(backup, client);
}

/** Where a Succeeded EtcdBackup's snapshot is, with the sha256 it recorded. */
export async function restoreSourceOfBackup(backup: EtcdBackup, client: KubeClient): Promise<RestoreSource> {
  const name = backup.metadata?.name ?? '';
  const namespace = backup.metadata?.namespace ?? '';
  if (backup.status?.phase !== 'Succeeded' || !backup.status.key) {
    throw new RestoreRefusal(
      'BackupNotComplete',
      `EtcdBackup ${name} is ${backup.status?.phase ?? 'Pending'}: only a Succeeded backup can be restored`,
    );
  }
  // The backup's own destination, or its cluster's at the time (read now: it must still exist).
  const source = backup.spec.destination
    ? undefined
    : await client.find(etcdClusters, backup.spec.clusterName, namespace);
  const s3 = s3Of(backup.spec.destination ?? source?.spec.backup?.destination, `EtcdBackup ${name}`);
  const key = `${s3.prefix ?? ''}${backup.status.key}`;
  return { s3, key, sha256: backup.status.sha256, describe: `EtcdBackup ${name} (s3://${s3.bucket}/${key})` };
}

/** Reads the whole snapshot through the trailer check; refuses a corrupt or a different one. */
export async function verifyRestoreSource(
  source: RestoreSource,
  namespace: string,
  client: KubeClient,
): Promise<VerifiedSnapshot> {
  let store;
  try {
    store = await openBackupStore({ s3: source.s3 }, namespace, client);
  } catch (error) {
    if (error instanceof DestinationError) throw new RestoreRefusal(error.reason, error.message);
    throw error;
  }
  try {
    const verifier = new SnapshotTrailerVerifier();
    try {
      for await (const chunk of await store.read(source.key)) verifier.update(chunk);
    } catch (error) {
      throw new RestoreRefusal('BackupUnreadable', `${source.describe}: ${messageOf(error)}`);
    }
    let verified: VerifiedSnapshot;
    try {
      verified = verifier.finish(source.describe);
    } catch (error) {
      if (error instanceof EtcdEngineError) throw new RestoreRefusal('BackupCorrupt', error.message, true);
      throw error;
    }
    if (source.sha256 && source.sha256 !== verified.sha256) {
      throw new RestoreRefusal(
        'BackupCorrupt',
        `${source.describe}: its sha256 is ${verified.sha256}, but the backup record says ${source.sha256}; refusing to restore`,
        true,
      );
    }
    return verified;
  } finally {
    store.close();
  }
}
