// Names and labels of backups: the object key of a backup's snapshot, and how scheduled backups
// are found again (labels), so every decision is read back from the API server, never remembered.
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';

/** The cluster a scheduled backup belongs to. */
export const backupClusterLabel = 'etcd.homeostat.dev/cluster';
/** Marks the backups the schedule made (and may delete by retention); value "true". */
export const scheduledLabel = 'etcd.homeostat.dev/scheduled';
/** When the schedule wanted this backup (RFC 3339): the schedule's memory of what it has done. */
export const scheduledAtAnnotation = 'etcd.homeostat.dev/scheduled-at';

/**
 * The snapshot's name under the destination's prefix: `<namespace>/<cluster>/<backup>-<uid>.db`.
 * Fixed by the EtcdBackup, so a backup taken again after a crash overwrites its own object and
 * never makes a second one; the uid keeps a later EtcdBackup of the same name from overwriting it.
 */
export function backupObjectName(backup: EtcdBackup): string {
  const uid = (backup.metadata?.uid ?? '').slice(0, 8);
  return `${backup.metadata?.namespace ?? ''}/${backup.spec.clusterName}/${backup.metadata?.name ?? ''}-${uid}.db`;
}
