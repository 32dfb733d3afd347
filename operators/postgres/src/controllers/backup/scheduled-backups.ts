// What the backup schedule decides from the PostgreSQLBackups it reads back (ADR 0216), as pure
// functions: which backups are the schedule's, which of them retention lets go, and what the
// cluster's status.backup says of them. Nothing is remembered in memory: labels and annotations on
// the PostgreSQLBackups, and the Retention condition of the newest scheduled one, are the
// schedule's whole state, so a restarted operator takes up where it was.
import { findCondition } from '@homeostat/reconcile';
import { scheduledAtOf } from '@homeostat/operator-kit/schedule';
import { defaultRetention } from '../../api/backup-schema.ts';
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';
import type { BackupSpecFields, BackupStatusFields } from '../../api/postgres-cluster-types.ts';
import { backupsToExpire, type RetentionPolicy } from '../../backup/retention.ts';

/** The cluster a scheduled backup belongs to. */
export const backupClusterLabel = 'postgres.homeostat.dev/cluster';
/** Marks the backups the schedule made (and that retention may expire); value "true". */
export const scheduledLabel = 'postgres.homeostat.dev/scheduled';
/** When the schedule wanted this backup (RFC 3339): the schedule's memory of what it has done. */
export const scheduledAtAnnotation = 'postgres.homeostat.dev/scheduled-at';
/** The condition on a scheduled PostgreSQLBackup that says what retention did after it succeeded. */
export const retentionCondition = 'Retention';

export const isScheduled = (b: PostgresBackup): boolean => b.metadata?.labels?.[scheduledLabel] === 'true';
export const scheduledAt = (b: PostgresBackup): number =>
  scheduledAtOf(b.metadata?.annotations, scheduledAtAnnotation);
const finishedAt = (b: PostgresBackup): number => Date.parse(b.status?.finishedAt ?? '') || 0;
const isFinished = (b: PostgresBackup): boolean =>
  b.status?.phase === 'Succeeded' || b.status?.phase === 'Failed';

/** spec.backup.retention as the engine takes it: maxAge (30d, 720h) in days. */
export function retentionPolicyOf(retention: BackupSpecFields['retention'] | undefined): RetentionPolicy {
  // The API server fills in the default; a cluster read from an older CRD may lack it.
  const given: NonNullable<BackupSpecFields['retention']> = retention ?? defaultRetention;
  const { keepLast, maxAge } = given;
  const match = maxAge === undefined ? null : /^([0-9]+)([dh])$/.exec(maxAge);
  const maxAgeDays = match ? Number(match[1]) / (match[2] === 'h' ? 24 : 1) : undefined;
  return {
    ...(keepLast !== undefined ? { keepLast } : {}),
    ...(maxAgeDays !== undefined ? { maxAgeDays } : {}),
  };
}

/** The newest scheduled backup that succeeded: the one whose success retention follows. */
export function newestScheduledSuccess(scheduled: readonly PostgresBackup[]): PostgresBackup | undefined {
  return scheduled
    .filter((b) => b.status?.phase === 'Succeeded' && b.status.label)
    .sort((a, b) => finishedAt(b) - finishedAt(a))[0];
}

/** Whether retention has run (well or not) after `backup`; it runs once per scheduled backup, never in a loop. */
export const retentionDone = (backup: PostgresBackup): boolean =>
  findCondition(backup.status?.conditions, retentionCondition) !== undefined;

/** What retention does after the newest scheduled backup succeeded. */
export interface RetentionPlan {
  /** Scheduled backups to expire from the repository, then delete (oldest first). */
  readonly expire: readonly PostgresBackup[];
  /** Scheduled backups the policy lets go but a running restore drill is restoring: kept for now. */
  readonly held: readonly PostgresBackup[];
  /** Failed scheduled backups older than every backup kept: nothing of them is in the repository. */
  readonly dropFailed: readonly PostgresBackup[];
}

/**
 * Applies the policy to the scheduled backups alone: one created by hand is never expired (nor
 * counted), whatever the policy. A backup is kept when the policy keeps it, and the newest always.
 * One named in `heldByDrills` is kept too, this time: expiring it under a running drill would fail
 * the drill for nothing and lose its verdict; the retention after a later scheduled backup expires it.
 */
export function retentionPlan(
  scheduled: readonly PostgresBackup[],
  policy: RetentionPolicy,
  now: Date,
  heldByDrills: ReadonlySet<string> = new Set(),
): RetentionPlan {
  const succeeded = scheduled
    .filter((b) => b.status?.phase === 'Succeeded' && b.status.label && b.status.finishedAt)
    .map((backup) => ({ backup, label: backup.status?.label ?? '', stopTime: new Date(finishedAt(backup)) }));
  const letGo = backupsToExpire(succeeded, policy, now);
  const isHeld = (e: (typeof letGo)[number]) => heldByDrills.has(e.backup.metadata?.name ?? '');
  const expire = letGo.filter((e) => !isHeld(e));
  const expiring = new Set(expire.map((e) => e.label));
  const kept = succeeded.filter((s) => !expiring.has(s.label)).map((s) => scheduledAt(s.backup));
  // With no success kept, the failures are all there is to read: none is dropped.
  const oldestKept = kept.length > 0 ? Math.min(...kept) : 0;
  const dropFailed = scheduled.filter((b) => b.status?.phase === 'Failed' && scheduledAt(b) < oldestKept);
  return {
    expire: expire.map((e) => e.backup),
    held: letGo.filter(isHeld).map((e) => e.backup),
    dropFailed,
  };
}

/** A scheduled backup not finished yet: the next run waits for it (never two at once). */
export const unfinishedScheduled = (scheduled: readonly PostgresBackup[]): PostgresBackup | undefined =>
  scheduled.find((b) => !isFinished(b));

/** The fields of status.backup the schedule keeps; the cluster controller writes the archive's. */
export type ScheduleStatusFields = Pick<
  BackupStatusFields,
  | 'lastBackupTime'
  | 'lastBackupLabel'
  | 'lastScheduledBackup'
  | 'lastScheduledBackupTime'
  | 'nextScheduledBackupTime'
>;

/** What status.backup says of the base backups of a cluster (all of them) and of its schedule. */
export function scheduleStatus(
  backups: readonly PostgresBackup[],
  next: Date | undefined,
): ScheduleStatusFields {
  const newest = backups
    .filter((b) => b.status?.phase === 'Succeeded' && b.status.finishedAt)
    .sort((a, b) => finishedAt(b) - finishedAt(a))[0];
  const lastScheduled = backups.filter(isScheduled).sort((a, b) => scheduledAt(b) - scheduledAt(a))[0];
  return {
    ...(newest?.status?.finishedAt ? { lastBackupTime: newest.status.finishedAt } : {}),
    ...(newest?.status?.label ? { lastBackupLabel: newest.status.label } : {}),
    ...(lastScheduled
      ? {
          lastScheduledBackup: lastScheduled.metadata?.name ?? '',
          lastScheduledBackupTime: new Date(scheduledAt(lastScheduled)).toISOString(),
        }
      : {}),
    ...(next ? { nextScheduledBackupTime: next.toISOString() } : {}),
  };
}
