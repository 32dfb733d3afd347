// What the repository holds, read from `pgbackrest info --output=json` (the backups with their
// LSNs, times and sizes, and the archived WAL range) and `repo-ls` (when the newest segment was
// archived). Parsed against a schema of the fields used, so a format change is an error that
// names itself rather than a wrong restore.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseLsn, type Lsn } from '../instance/lsn.ts';
import { BackupToolError, runPgBackRest, type PgBackRestInvocation } from './pgbackrest-cli.ts';
import { toolFailureSummary } from './redact.ts';
import { isSegmentName } from './wal-segment.ts';

const InfoBackup = Type.Object({
  label: Type.String(),
  type: Type.Union([Type.Literal('full'), Type.Literal('diff'), Type.Literal('incr')]),
  error: Type.Optional(Type.Boolean()),
  archive: Type.Object({ start: Type.String(), stop: Type.String() }),
  lsn: Type.Object({ start: Type.String(), stop: Type.String() }),
  timestamp: Type.Object({ start: Type.Number(), stop: Type.Number() }),
  info: Type.Object({ size: Type.Number(), repository: Type.Object({ size: Type.Number() }) }),
  backrest: Type.Object({ format: Type.Number(), version: Type.String() }),
});

const InfoStanza = Type.Object({
  name: Type.String(),
  status: Type.Object({ code: Type.Number(), message: Type.String() }),
  repo: Type.Array(
    Type.Object({ key: Type.Number(), status: Type.Object({ code: Type.Number(), message: Type.String() }) }),
  ),
  // min and max are null while nothing has been archived yet.
  archive: Type.Array(
    Type.Object({
      id: Type.String(),
      min: Type.Union([Type.String(), Type.Null()]),
      max: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  backup: Type.Array(InfoBackup),
});

const Info = Type.Array(InfoStanza);

const RepoListing = Type.Record(
  Type.String(),
  Type.Object({ type: Type.String(), time: Type.Optional(Type.Number()) }),
);

/** One base backup in the repository. */
export interface BackupRecord {
  readonly label: string;
  readonly type: 'full' | 'diff' | 'incr';
  readonly startTime: Date;
  /** From here on the backup is consistent: the earliest time it can be restored to. */
  readonly stopTime: Date;
  readonly beginLsn: Lsn;
  readonly endLsn: Lsn;
  /** The WAL segments from the backup's start to its end (the oldest WAL it needs). */
  readonly walStart: string;
  readonly walStop: string;
  /** The database's size, and what the backup takes in the bucket (compressed). */
  readonly databaseBytes: number;
  readonly storedBytes: number;
  /** pgBackRest's repository format and the version that wrote the backup. */
  readonly repositoryFormat: number;
  readonly toolVersion: string;
}

/** The repository's backups (oldest first) and its archived WAL. */
export interface RepositoryState {
  /**
   * Why the tool could not read the repository (an S3 error, unredacted), when it could not:
   * `info` reports that in its output and still exits 0.
   */
  readonly unreadable?: string;
  readonly backups: readonly BackupRecord[];
  /** The oldest and newest segment archived for the current database, if any. */
  readonly archive?: { readonly firstSegment: string; readonly lastSegment: string };
}

function toRecord(b: Static<typeof InfoBackup>): BackupRecord {
  return {
    label: b.label,
    type: b.type,
    startTime: new Date(b.timestamp.start * 1000),
    stopTime: new Date(b.timestamp.stop * 1000),
    beginLsn: parseLsn(b.lsn.start),
    endLsn: parseLsn(b.lsn.stop),
    walStart: b.archive.start,
    walStop: b.archive.stop,
    databaseBytes: b.info.size,
    storedBytes: b.info.repository.size,
    repositoryFormat: b.backrest.format,
    toolVersion: b.backrest.version,
  };
}

/** Parses `info --output=json` for one stanza; throws naming what did not match. */
export function parseRepositoryInfo(json: string, stanza: string): RepositoryState {
  const parsed: unknown = JSON.parse(json);
  if (!Value.Check(Info, parsed)) {
    const first = [...Value.Errors(Info, parsed)][0];
    throw new Error(
      `pgbackrest info printed an unexpected shape (${first?.path ?? ''}: ${first?.message ?? ''})`,
    );
  }
  const entry = parsed.find((s) => s.name === stanza);
  if (!entry) throw new Error(`pgbackrest info does not list the stanza ${stanza}`);
  // Code 2 is "no valid backups", an empty repository; 0 is ok. Anything else, and any
  // repository whose status is not ok, means what follows cannot be trusted.
  const failed = entry.repo.find((r) => r.status.code !== 0 && r.status.code !== 2);
  if (failed || (entry.status.code !== 0 && entry.status.code !== 2)) {
    return { backups: [], unreadable: failed?.status.message ?? entry.status.message };
  }
  const backups = entry.backup.filter((b) => b.error !== true).map(toRecord);
  backups.sort((a, b) => a.stopTime.getTime() - b.stopTime.getTime());
  // The last archive entry is the current database's (a new one starts after a major upgrade).
  const current = entry.archive[entry.archive.length - 1];
  return current?.min && current.max
    ? { backups, archive: { firstSegment: current.min, lastSegment: current.max } }
    : { backups };
}

/** Reads the repository's backups and archive range. */
export async function readRepository(invocation: PgBackRestInvocation): Promise<RepositoryState> {
  const state = parseRepositoryInfo(
    await runPgBackRest(invocation, 'info', ['--output=json']),
    invocation.stanza,
  );
  if (state.unreadable !== undefined) {
    throw new BackupToolError(
      'info',
      undefined,
      toolFailureSummary(state.unreadable, invocation.credentials),
    );
  }
  return state;
}

/**
 * When the newest WAL segment reached the repository (the object's modification time): no
 * commit in the archive is later than this, so a time target past it cannot be reached.
 */
export async function archiveEndTime(invocation: PgBackRestInvocation): Promise<Date | undefined> {
  const out = await runPgBackRest(invocation, 'repo-ls', [
    '--output=json',
    '--recurse',
    `archive/${invocation.stanza}`,
  ]);
  const parsed: unknown = JSON.parse(out);
  if (!Value.Check(RepoListing, parsed)) throw new Error('pgbackrest repo-ls printed an unexpected shape');
  let newest: { name: string; time: number } | undefined;
  for (const [path, entry] of Object.entries(parsed)) {
    // "15-1/0000000100000000/000000010000000000000003-<sha1>.zst": the segment is the name's head.
    const segment = (path.split('/').pop() ?? '').split('-')[0] ?? '';
    if (entry.type !== 'file' || entry.time === undefined || !isSegmentName(segment)) continue;
    if (!newest || segment > newest.name || (segment === newest.name && entry.time > newest.time)) {
      newest = { name: segment, time: entry.time };
    }
  }
  return newest ? new Date(newest.time * 1000) : undefined;
}
