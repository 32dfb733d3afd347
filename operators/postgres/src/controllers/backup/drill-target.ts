// Which backup a restore drill proves. Proving only the newest would leave every older backup
// unproven, though a restore to a time before the newest needs one of them: each drill takes the
// newest backup no drill has restored yet, and once every backup has been, the newest again (it
// proves the WAL archived since, too). With drills at least as frequent as backups, every backup is
// proven once, the newest first.
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';

/** A backup a drill can restore: it succeeded, of this incarnation of the cluster, with its label. */
function restorable(backup: PostgresBackup, clusterUid: string): boolean {
  return (
    backup.status?.phase === 'Succeeded' &&
    backup.status.clusterUid === clusterUid &&
    !!backup.status.label &&
    !backup.metadata?.deletionTimestamp
  );
}

const finished = (b: PostgresBackup): string =>
  b.status?.finishedAt ?? b.metadata?.creationTimestamp?.toString() ?? '';

/** The backup the next drill restores, and how many restorable backups no drill has restored yet. */
export function drillTarget(
  backups: readonly PostgresBackup[],
  clusterUid: string,
): { backup: PostgresBackup | undefined; undrilled: number } {
  const candidates = backups
    .filter((b) => restorable(b, clusterUid))
    .sort((a, b) => finished(b).localeCompare(finished(a)));
  const undrilled = candidates.filter((b) => !b.status?.verification);
  return { backup: undrilled[0] ?? candidates[0], undrilled: undrilled.length };
}
