// Which backups a retention policy lets go, and letting them go. A backup is kept when it is one
// of the newest `keepLast`, or when it is needed to restore to any moment within `maxAgeDays`
// (every backup that ended inside the window, and the newest one that ended before it, from which
// the window's start is reached by WAL). The newest backup is always kept. pgBackRest removes a
// backup's WAL only when no kept backup needs it: expiring a backup moves the archive's start to
// the oldest kept backup's first segment, never past it.
import { runPgBackRest, type PgBackRestInvocation } from './pgbackrest-cli.ts';
import { readRepository, type BackupRecord } from './repository-info.ts';

export interface RetentionPolicy {
  /** Keep at least this many of the newest backups. */
  readonly keepLast?: number;
  /** Keep what a restore to any moment in the last this many days needs. */
  readonly maxAgeDays?: number;
}

const dayMs = 24 * 60 * 60 * 1000;

/** What retention reads of a backup: the repository's record, or the operator's PostgreSQLBackup status. */
export type RetainedBackup = Pick<BackupRecord, 'label' | 'stopTime'>;

/** The backups (oldest first in, oldest first out) the policy lets go at `now`. */
export function backupsToExpire<T extends RetainedBackup>(
  backups: readonly T[],
  policy: RetentionPolicy,
  now: Date,
): T[] {
  if (policy.keepLast === undefined && policy.maxAgeDays === undefined) return [];
  const newestFirst = [...backups].sort((a, b) => b.stopTime.getTime() - a.stopTime.getTime());
  const kept = new Set<string>();
  const newest = newestFirst[0];
  if (newest) kept.add(newest.label);
  if (policy.keepLast !== undefined) newestFirst.slice(0, policy.keepLast).forEach((b) => kept.add(b.label));
  if (policy.maxAgeDays !== undefined) {
    const windowStart = now.getTime() - policy.maxAgeDays * dayMs;
    for (const b of newestFirst) {
      kept.add(b.label);
      // The first one that ended before the window is the base the window's start replays from.
      if (b.stopTime.getTime() < windowStart) break;
    }
  }
  return backups.filter((b) => !kept.has(b.label));
}

/** Expires what the policy lets go; returns the labels removed. */
export async function applyRetention(
  invocation: PgBackRestInvocation,
  policy: RetentionPolicy,
  now: Date = new Date(),
): Promise<string[]> {
  const { backups } = await readRepository(invocation);
  const expired = backupsToExpire(backups, policy, now);
  for (const backup of expired) await runPgBackRest(invocation, 'expire', [`--set=${backup.label}`]);
  // Expiring a set leaves the WAL before it; one more pass keeping the WAL of as many backups as
  // are kept removes what only the expired ones needed. The tool keeps each backup's own WAL
  // (start to stop) whatever this count says, so a backup taken meanwhile costs nothing but
  // the oldest kept backup's WAL past its end.
  const kept = backups.length - expired.length;
  if (expired.length > 0 && kept > 0) {
    await runPgBackRest(invocation, 'expire', [
      '--repo1-retention-archive-type=full',
      `--repo1-retention-archive=${kept}`,
    ]);
  }
  return expired.map((b) => b.label);
}
