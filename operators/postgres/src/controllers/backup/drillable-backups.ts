// The PostgreSQLBackups a restore drill of a cluster may restore. Which of them the next drill
// takes is the rule every operator shares (drillTarget, @homeostat/operator-kit/schedule).
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';

/** Backups a drill can restore: succeeded, of this incarnation of the cluster, with their label, not being deleted. */
export function drillableBackups(
  backups: readonly PostgresBackup[],
  namespace: string,
  clusterUid: string,
): PostgresBackup[] {
  return backups.filter(
    (b) =>
      b.metadata?.namespace === namespace &&
      b.status?.phase === 'Succeeded' &&
      b.status.clusterUid === clusterUid &&
      !!b.status.label &&
      !b.metadata.deletionTimestamp,
  );
}
