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

/** A backup file in a claim: the claim, and the file's path inside its volume. */
export interface ClaimFile {
  readonly claimName: string;
  readonly path: string;
}

/** A backup to restore: in a bucket (s3 and key) or in a claim (claim), and the sha256 it must have. */
export interface RestoreSource {
  readonly s3?: S3Destination;
  readonly claim?: ClaimFile;
  /** Object key in the bucket, prefix included; or the file's path in the claim. */
  readonly key: string;
  readonly sha256: string | undefined;
  /** For messages: `s3://bucket/key` or `pvc://claim/path` (and the EtcdBackup it came from). */
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

/** The file `key` (relative to the destination's prefix or directory) of a destination. */
function locate(
  destination: BackupDestination | undefined,
  key: string,
  sha256: string | undefined,
  what: string,
): RestoreSource {
  if (destination?.s3) {
    const s3 = destination.s3;
    const objectKey = `${s3.prefix ?? ''}${key}`;
    const where = `s3://${s3.bucket}/${objectKey}`;
    return { s3, key: objectKey, sha256, describe: what ? `${what} (${where})` : where };
  }
  if (destination?.persistentVolumeClaim) {
    const { claimName, directory } = destination.persistentVolumeClaim;
    const path = [directory, key].filter(Boolean).join('/');
    const where = `pvc://${claimName}/${path}`;
    return { claim: { claimName, path }, key: path, sha256, describe: what ? `${what} (${where})` : where };
  }
  throw new RestoreRefusal('BackupNotFound', `${what || 'fromBackup.location'} names no destination`);
}

/** Resolves bootstrap.fromBackup to a location; undefined when the cluster is not restored from one. */
export async function restoreSourceOf(
  cluster: EtcdCluster,
  client: KubeClient,
): Promise<RestoreSource | undefined> {
  const from = cluster.spec.bootstrap?.fromBackup;
  if (!from) return undefined;
  const namespace = namespaceOf(cluster);
  if (from.location) return locate(from.location.destination, from.location.key, from.location.sha256, '');
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
  // Where it was written: its own destination (the spec, immutable; every scheduled backup has one)
  // before what its status recorded (only a backup made with a cluster name alone needs the
  // record: status can be written by more people than the spec). The cluster's destination may
  // have moved since. A backup of an older operator, with neither: its cluster's as it is now.
  const recorded = backup.spec.destination ?? backup.status.destination;
  const source = recorded ? undefined : await client.find(etcdClusters, backup.spec.clusterName, namespace);
  return locate(
    recorded ?? source?.spec.backup?.destination,
    backup.status.key,
    backup.status.sha256,
    `EtcdBackup ${name}`,
  );
}

/** Reads the whole snapshot through the trailer check; refuses a corrupt or a different one. */
export async function verifyRestoreSource(
  source: RestoreSource,
  namespace: string,
  client: KubeClient,
): Promise<VerifiedSnapshot> {
  if (!source.s3) {
    throw new RestoreRefusal(
      'DestinationNotSupported',
      `${source.describe}: a backup in a claim is verified by a pod (claim-verify-pod.ts), not by the operator`,
    );
  }
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
