// The ContinuousArchiving condition and status.backup, from the primary's archiver
// (pg_stat_archiver) as the operator's probe read it. Only the segment names and times PostgreSQL
// reports reach the status, never what the backup tool printed (which can quote the S3 server's
// error body, access key id included). A busy primary archives a segment every few seconds; the
// status records that at most every 10 s so it is not rewritten at every probe.
import type { ConditionInput } from '@homeostat/reconcile';
import {
  conditionTypes,
  type BackupStatusFields,
  type PostgresCluster,
} from '../api/postgres-cluster-types.ts';
import type { ArchiverStatus, InstanceStatus } from '../instance/observe.ts';

/** How stale status.backup.lastArchivedTime may get while segments keep being archived. */
export const archivedRecordIntervalMs = 10_000;

/** What the primary's probe said of archiving: its name and archiver, or that it was not seen. */
export type PrimaryArchiving =
  { readonly primary: string; readonly archiver: ArchiverStatus | undefined } | undefined;

/** The archiving part of what `view` saw of the primary `primary`, if it saw it taking writes. */
export function primaryArchiving(
  primary: string | undefined,
  instances: readonly { readonly status: InstanceStatus }[] | undefined,
): PrimaryArchiving {
  const status = instances?.find((i) => i.status.name === primary)?.status;
  if (!primary || !status?.reachable || status.role !== 'primary') return undefined;
  return { primary, archiver: status.archiver };
}

export interface ArchivingReport {
  /** The condition to set; undefined keeps the one there (the primary was not seen this turn). */
  readonly condition: ConditionInput | undefined;
  readonly backup: BackupStatusFields | undefined;
  /** A Warning Event for a failure not reported before, or a Normal one when archiving resumed. */
  readonly event?: { readonly type: 'Warning' | 'Normal'; readonly reason: string; readonly message: string };
}

const type = conditionTypes.continuousArchiving;

function destinationText(cluster: PostgresCluster): string {
  const s3 = cluster.spec.backup?.destination.s3;
  return s3 ? `s3://${s3.bucket}/${s3.prefix ?? ''}` : 'the backup destination';
}

/** Whether the archiver's last failure came after its last success: it is stuck on that segment. */
function failingNow(archiver: ArchiverStatus): boolean {
  if (!archiver.lastFailedAt || !archiver.lastFailedWal) return false;
  return !archiver.lastArchivedAt || archiver.lastFailedAt.getTime() > archiver.lastArchivedAt.getTime();
}

/**
 * The fields of status.backup this report owns. The backup schedule writes the others (the base
 * backups') by merge patch; applied here from a cached copy, they would be owned twice and an old
 * copy could put back a value the schedule has moved on.
 */
function archiveFieldsOf(backup: BackupStatusFields | undefined): BackupStatusFields | undefined {
  if (!backup) return undefined;
  const { lastArchivedWal, lastArchivedTime, failingWal, failingSince } = backup;
  const fields = {
    ...(lastArchivedWal !== undefined ? { lastArchivedWal } : {}),
    ...(lastArchivedTime !== undefined ? { lastArchivedTime } : {}),
    ...(failingWal !== undefined ? { failingWal } : {}),
    ...(failingSince !== undefined ? { failingSince } : {}),
  };
  return Object.keys(fields).length > 0 ? fields : undefined;
}

/** The archiving report for `cluster` from this turn's look at its primary. */
export function archivingReport(
  cluster: PostgresCluster,
  seen: PrimaryArchiving,
  now = new Date(),
): ArchivingReport {
  const previous = archiveFieldsOf(cluster.status?.backup);
  if (!cluster.spec.backup) return { condition: undefined, backup: undefined };
  if (!seen) return { condition: undefined, backup: previous };
  const { primary, archiver } = seen;
  if (!archiver) {
    return {
      condition: {
        type,
        status: 'False',
        reason: 'ArchivingNotStarted',
        message: `${primary} does not archive yet: archive_mode is off until its pod restarts with spec.backup`,
      },
      backup: previous,
    };
  }
  const archived = recordArchived(previous, archiver, now);
  if (failingNow(archiver)) {
    const wal = archiver.lastFailedWal ?? '';
    const sameFailure = previous?.failingWal === wal && previous.failingSince !== undefined;
    const since = sameFailure ? (previous.failingSince ?? '') : (archiver.lastFailedAt ?? now).toISOString();
    const message = `${primary} fails to archive WAL segment ${wal} to ${destinationText(cluster)} since ${since}; later segments wait in pg_wal behind it. Check the bucket, the endpoint and the credentials Secret ${cluster.spec.backup.destination.s3.credentialsSecretName}; the exit code of pgBackRest is in ${primary}'s postgres log.`;
    return {
      condition: { type, status: 'False', reason: 'ArchivingFailing', message },
      backup: { ...archived, failingWal: wal, failingSince: since },
      ...(sameFailure ? {} : { event: { type: 'Warning', reason: 'ArchivingFailing', message } }),
    };
  }
  const wasFailing = previous?.failingWal !== undefined;
  const message = archiver.lastArchivedWal
    ? `${primary} archives its WAL to ${destinationText(cluster)}`
    : `${primary} archives its WAL to ${destinationText(cluster)}; no segment has been finished yet`;
  return {
    condition: { type, status: 'True', reason: 'Archiving', message },
    backup: archived,
    ...(wasFailing
      ? {
          event: {
            type: 'Normal',
            reason: 'ArchivingResumed',
            message: `${primary} archived ${archiver.lastArchivedWal ?? 'a segment'} again; the archive is no longer stuck at ${previous?.failingWal ?? ''}`,
          },
        }
      : {}),
  };
}

/** lastArchived* as recorded: the archiver's newest, unless the recorded one is less than 10 s older. */
function recordArchived(
  previous: BackupStatusFields | undefined,
  archiver: ArchiverStatus,
  now: Date,
): BackupStatusFields {
  const { lastArchivedWal, lastArchivedAt } = archiver;
  const recorded = previous?.lastArchivedTime ? Date.parse(previous.lastArchivedTime) : undefined;
  const fresh =
    lastArchivedAt !== undefined &&
    lastArchivedWal !== undefined &&
    (recorded === undefined ||
      previous?.failingWal !== undefined ||
      now.getTime() - recorded >= archivedRecordIntervalMs);
  if (fresh) return { lastArchivedWal, lastArchivedTime: lastArchivedAt.toISOString() };
  return {
    ...(previous?.lastArchivedWal ? { lastArchivedWal: previous.lastArchivedWal } : {}),
    ...(previous?.lastArchivedTime ? { lastArchivedTime: previous.lastArchivedTime } : {}),
  };
}
