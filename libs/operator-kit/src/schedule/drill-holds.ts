// Which backups a restore drill is restoring right now, read from the drill pods themselves: each
// names the backup it restores in an annotation. Retention keeps those for now (expiring one
// under a running drill fails the drill, a false alarm, and leaves its verdict nowhere) and
// expires them on a later pass, once the drill has recorded its verdict and deleted its pod.
import type { V1Pod } from '@kubernetes/client-node';

/** How an operator marks its drill pods: the label naming the cluster, the annotation naming the backup. */
export interface DrillPodMarks {
  readonly clusterLabel: string;
  readonly backupAnnotation: string;
}

/**
 * The names of the backups that live drill pods of `cluster` (in `namespace`) restore. A pod being
 * deleted holds nothing: its drill is over (its verdict recorded first) or was called off.
 */
export function backupsHeldByDrills(
  pods: readonly V1Pod[],
  marks: DrillPodMarks,
  namespace: string,
  cluster: string,
): ReadonlySet<string> {
  const held = new Set<string>();
  for (const pod of pods) {
    const backup = pod.metadata?.annotations?.[marks.backupAnnotation];
    if (
      backup &&
      pod.metadata?.namespace === namespace &&
      pod.metadata.labels?.[marks.clusterLabel] === cluster &&
      !pod.metadata.deletionTimestamp
    ) {
      held.add(backup);
    }
  }
  return held;
}
