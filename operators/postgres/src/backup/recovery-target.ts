// Where a restore should stop, and whether the repository can get there. Checked before anything
// is restored, so an impossible target is a clear refusal instead of a server that replays the
// whole archive and then stops with "recovery ended before configured recovery target was reached".
import { formatLsn, parseLsn, type Lsn } from '../instance/lsn.ts';
import type { BackupRecord, RepositoryState } from './repository-info.ts';
import { segmentRange } from './wal-segment.ts';

/** The end of the archive, a moment, a WAL position, or a restore point made by pg_create_restore_point. */
export type RecoveryTarget =
  | { readonly type: 'latest' }
  | { readonly type: 'time'; readonly time: Date }
  | { readonly type: 'lsn'; readonly lsn: string }
  | { readonly type: 'name'; readonly name: string };

/** What the repository knows of the archive's end beyond its segment names. */
export interface ArchiveEnd {
  /** When the newest segment was archived (`archiveEndTime`); no archived commit is later. */
  readonly time?: Date | undefined;
}

export type RecoveryPlan =
  { readonly ok: true; readonly backup: BackupRecord } | { readonly ok: false; readonly message: string };

const iso = (d: Date) => d.toISOString();

function describeTarget(target: RecoveryTarget): string {
  switch (target.type) {
    case 'latest':
      return 'the end of the archive';
    case 'time':
      return `time ${iso(target.time)}`;
    case 'lsn':
      return `LSN ${target.lsn}`;
    case 'name':
      return `restore point "${target.name}"`;
  }
}

/** Whether `backup` ends at or before the target, so that replaying WAL from it can reach the target. */
function endsBefore(backup: BackupRecord, target: RecoveryTarget, lsn: Lsn | undefined): boolean {
  if (target.type === 'time') return backup.stopTime.getTime() <= target.time.getTime();
  if (lsn !== undefined) return backup.endLsn <= lsn;
  return true;
}

/**
 * Picks the backup to restore for `target` (the one named by `backupLabel`, or the newest that
 * ends before the target) and refuses, saying why, a target before the first backup's end, past
 * the archive's end, or before the named backup's end.
 */
export function planRecovery(
  repository: RepositoryState,
  target: RecoveryTarget,
  archiveEnd: ArchiveEnd = {},
  backupLabel?: string,
): RecoveryPlan {
  const what = describeTarget(target);
  const { backups, archive } = repository;
  const first = backups[0];
  if (!first) return { ok: false, message: `cannot restore to ${what}: the repository holds no backup` };
  let lsn: Lsn | undefined;
  if (target.type === 'lsn') {
    try {
      lsn = parseLsn(target.lsn);
    } catch {
      return { ok: false, message: `cannot restore to ${what}: not a PostgreSQL LSN (like 0/3000060)` };
    }
  }
  if (target.type === 'time' && target.time.getTime() < first.stopTime.getTime()) {
    return {
      ok: false,
      message: `cannot restore to ${what}: it is before the first backup (${first.label}) ended at ${iso(first.stopTime)}, the earliest moment the repository can restore`,
    };
  }
  if (lsn !== undefined && lsn < first.endLsn) {
    return {
      ok: false,
      message: `cannot restore to ${what}: it is before the first backup (${first.label}) ended at LSN ${formatLsn(first.endLsn)}, the earliest position the repository can restore`,
    };
  }
  if (target.type === 'time' && archiveEnd.time && target.time.getTime() > archiveEnd.time.getTime()) {
    return {
      ok: false,
      message: `cannot restore to ${what}: it is past the end of the WAL archive (its newest segment was archived at ${iso(archiveEnd.time)})`,
    };
  }
  if (lsn !== undefined) {
    const archiveEndLsn = archive ? segmentRange(archive.lastSegment.slice(0, 24)).end : undefined;
    if (archiveEndLsn === undefined || lsn >= archiveEndLsn) {
      return {
        ok: false,
        message: `cannot restore to ${what}: it is past the end of the WAL archive (${archiveEndLsn === undefined ? 'no WAL archived' : `archived up to LSN ${formatLsn(archiveEndLsn)}`})`,
      };
    }
  }
  if (backupLabel !== undefined) {
    const named = backups.find((b) => b.label === backupLabel);
    if (!named)
      return {
        ok: false,
        message: `cannot restore backup ${backupLabel}: the repository has no such backup`,
      };
    if (!endsBefore(named, target, lsn)) {
      return {
        ok: false,
        message: `cannot restore backup ${backupLabel} to ${what}: the backup ended later (${iso(named.stopTime)}, LSN ${formatLsn(named.endLsn)}); WAL replays forward only`,
      };
    }
    return { ok: true, backup: named };
  }
  const candidates = backups.filter((b) => endsBefore(b, target, lsn));
  const chosen = candidates[candidates.length - 1] ?? first;
  return { ok: true, backup: chosen };
}
