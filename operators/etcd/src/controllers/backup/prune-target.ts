// What retention may delete for a scheduled backup, worked out from what only a person allowed to
// name a destination could have written: the backup's spec (immutable; the schedule copies the
// cluster's destination into it when it creates the backup), or for a backup made by an older
// operator without one, its cluster's spec; and the backup's own name and uid (backup-names.ts).
// Never from its status: anyone allowed to patch etcdbackups/status could otherwise point the
// delete at any file of any claim in the namespace, a member's data included. The status must
// agree with the location worked out here, or nothing is deleted (docs/adr/0308).
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { backupObjectName } from './backup-names.ts';
import type { BackupDestination } from './backup-store.ts';
import type { ClaimFile } from './restore-source.ts';

export type PruneTarget =
  /** An object in a bucket: `key` is relative to the destination's prefix. */
  | {
      readonly kind: 's3';
      readonly destination: BackupDestination;
      readonly key: string;
      readonly location: string;
    }
  /** A file in a claim that is no member's. */
  | { readonly kind: 'claim'; readonly file: ClaimFile; readonly location: string }
  /** Nothing may be deleted: the message says why (for a Warning Event). */
  | { readonly kind: 'refused'; readonly message: string };

/**
 * Where the snapshot of Succeeded scheduled `backup` of `cluster` is, or why retention must not
 * touch it. `isMemberClaim` says whether a claim holds an etcd member's data.
 */
export function pruneTarget(
  backup: EtcdBackup,
  cluster: EtcdCluster,
  isMemberClaim: (claim: string) => boolean,
): PruneTarget {
  const destination = backup.spec.destination ?? cluster.spec.backup?.destination;
  const key = backupObjectName(backup);
  let target: PruneTarget;
  if (destination?.s3) {
    const location = `s3://${destination.s3.bucket}/${destination.s3.prefix ?? ''}${key}`;
    target = { kind: 's3', destination, key, location };
  } else if (destination?.persistentVolumeClaim) {
    const { claimName, directory } = destination.persistentVolumeClaim;
    const path = [directory, key].filter(Boolean).join('/');
    const location = `pvc://${claimName}/${path}`;
    // The schema refuses such a directory; checked again because a delete follows.
    if (path.startsWith('/') || path.split('/').includes('..')) {
      return { kind: 'refused', message: `${location} is not a plain path inside the claim` };
    }
    if (isMemberClaim(claimName)) {
      return { kind: 'refused', message: `claim ${claimName} holds an etcd member's data` };
    }
    target = { kind: 'claim', file: { claimName, path }, location };
  } else {
    return { kind: 'refused', message: 'neither the backup nor its cluster names a destination' };
  }
  const status = backup.status;
  if (status?.location !== target.location || status.key !== key) {
    return {
      kind: 'refused',
      message: `its status says ${JSON.stringify(status?.location ?? '')} (key ${JSON.stringify(status?.key ?? '')}), but it was written to ${target.location} (from its spec, name and uid)`,
    };
  }
  return target;
}
