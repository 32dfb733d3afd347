// Which backup a restore drill proves, the same rule for every operator that drills its backups.
// Proving only the newest would leave every older backup unproven, though a restore to a time
// before the newest needs one of them: each drill takes the newest backup no drill has restored
// yet, and once every backup has been, the newest again (it proves the bucket still holds it, and
// for PostgreSQL the WAL archived since). A failed drill counts as drilled, so one broken backup
// does not hold up the proof of the others. With drills at least as frequent as backups, every
// backup is proven once, the newest first.

/** What the rule reads of a backup: when it was completed, and whether a drill recorded a verdict on it. */
export interface DrillableBackup {
  readonly metadata?: { readonly name?: string };
  readonly status?: { readonly finishedAt?: string; readonly verification?: object };
}

/** The backup the next drill restores, and how many of the candidates no drill has restored yet. */
export interface DrillTarget<B> {
  readonly backup: B | undefined;
  readonly undrilled: number;
}

const completedAt = (backup: DrillableBackup): number => Date.parse(backup.status?.finishedAt ?? '') || 0;

/**
 * Picks the backup the next restore drill restores among `restorable` (the operator's own test of
 * what a drill can restore: succeeded, of this very cluster); one with no completion time is none.
 */
export function drillTarget<B extends DrillableBackup>(restorable: readonly B[]): DrillTarget<B> {
  const newestFirst = restorable
    .filter((b) => completedAt(b) > 0)
    .sort(
      (a, b) =>
        completedAt(b) - completedAt(a) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
  const undrilled = newestFirst.filter((b) => b.status?.verification === undefined);
  return { backup: undrilled[0] ?? newestFirst[0], undrilled: undrilled.length };
}
