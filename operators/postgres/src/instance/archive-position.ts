// What a primary says before and after a count at a standby's position (ADR 0221): its position
// and which standbys a commit waits to be applied on; then switching to a new segment and waiting
// until the archiver has stored it, so a restore of the archive reaches the count's position.
import { parseLsn, type Lsn } from './lsn.ts';
import {
  errorMessage,
  withConnection,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from './instance.ts';

/** What a count on a standby needs from the primary first. */
export interface PrimaryBeforeCount {
  /** pg_current_wal_lsn(): every commit acknowledged so far lies before it. */
  readonly currentLsn: Lsn;
  /**
   * The standbys (application_name) a commit waits to be applied on: with synchronous_commit =
   * remote_apply, every synchronous (or potential, quorum) standby. Pausing the replay of one of
   * them would hold every commit; empty when commits wait for no replay.
   */
  readonly applyWaitsFor: readonly string[];
}

export async function primaryBeforeCount(
  primary: InstanceEndpoint,
  credentials: Credentials,
  connect: ConnectOptions,
): Promise<PrimaryBeforeCount> {
  return withConnection(primary, credentials, connect, async (c) => {
    const { rows } = await c.query<{ lsn: string; names: string[] }>(
      `SELECT pg_current_wal_lsn()::text AS lsn,
              coalesce((SELECT array_agg(application_name::text ORDER BY application_name) FROM pg_stat_replication
                         WHERE current_setting('synchronous_commit') = 'remote_apply' AND sync_state <> 'async'),
                       '{}') AS names`,
    );
    const row = rows[0];
    if (!row) throw new Error(`no row from ${primary.name}`);
    return { currentLsn: parseLsn(row.lsn), applyWaitsFor: row.names };
  });
}

/**
 * Ends the primary's current WAL segment (pg_switch_wal) and waits until its archiver has stored
 * that segment: then every position written before the call is in the archive. Returns the
 * segment; throws naming it when `timeoutMs` passes first.
 *
 * Archived means no status file of that segment or an earlier one is still `.ready` (a segment is
 * marked so when it is finished, before pg_switch_wal returns). pg_stat_archiver's
 * last_archived_wal cannot say it: pg_backup_stop switches segments before it writes the backup's
 * history file (<older segment>.<offset>.backup), so the archiver may store the new segment first
 * and that file last, and last_archived_wal then names the older segment for as long as nothing
 * else is archived.
 */
export async function switchAndAwaitArchive(
  primary: InstanceEndpoint,
  credentials: Credentials,
  connect: ConnectOptions,
  timeoutMs: number,
  pollMs = 200,
): Promise<string> {
  const segment = await withConnection(primary, credentials, connect, async (c) => {
    const { rows } = await c.query<{ segment: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS segment');
    return rows[0]?.segment ?? '';
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const archiver = await withConnection(primary, credentials, connect, async (c) => {
      // Segment names order as positions do, timelines first; a history file's name starts with
      // its segment's.
      const { rows } = await c.query<{ waiting: string[]; failed: string | null }>(
        `SELECT coalesce((SELECT array_agg(name ORDER BY name) FROM pg_ls_archive_statusdir()
                           WHERE name ~ '^[0-9A-F]{24}.*[.]ready$' AND left(name, 24) <= $1), '{}') AS waiting,
                (SELECT last_failed_wal FROM pg_stat_archiver) AS failed`,
        [segment],
      );
      return { waiting: rows[0]?.waiting ?? [], failed: rows[0]?.failed ?? null };
    }).catch((error: unknown) => {
      throw new Error(`reading ${primary.name}'s archiver: ${errorMessage(error)}`);
    });
    if (archiver.waiting.length === 0) return segment;
    if (Date.now() >= deadline)
      throw new Error(
        `${primary.name} had not archived WAL segment ${segment} after ${timeoutMs} ms (still to archive: ${archiver.waiting.map((n) => n.replace(/[.]ready$/, '')).join(', ')}${archiver.failed ? `; last failed: ${archiver.failed}` : ''})`,
      );
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
