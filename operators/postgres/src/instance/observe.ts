import pg from 'pg';
import { parseLsn, type Lsn } from './lsn.ts';
import {
  withConnection,
  errorMessage,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from './instance.ts';

/** One standby as its primary sees it (a row of pg_stat_replication). */
export interface StandbyConnection {
  readonly applicationName: string;
  readonly state: string;
  /** async, potential, sync or quorum. */
  readonly syncState: string;
  readonly flushLsn: Lsn | undefined;
  readonly replayLsn: Lsn | undefined;
}

/** The WAL receiver of a standby (pg_stat_wal_receiver), when one is running. */
export interface WalReceiverState {
  readonly status: string;
  readonly senderHost: string | undefined;
  readonly senderPort: number | undefined;
  /** Milliseconds since it last heard from its sender (by the standby's own clock). */
  readonly silentForMs?: number;
}

interface Reachable {
  readonly name: string;
  readonly reachable: true;
  readonly timeline: number;
  readonly synchronousStandbyNames: string;
  /**
   * The data of a former primary that pg_rewind could not bring back lies next to this instance's
   * data directory (`<data directory>.before-clone`, set aside by the entrypoint when it re-cloned).
   */
  readonly formerDataKeptAside?: true;
}

/** A physical replication slot on a primary (a row of pg_replication_slots). */
export interface SlotStatus {
  readonly name: string;
  readonly active: boolean;
  /** Bytes of WAL the slot keeps from being recycled (current LSN minus its restart LSN). */
  readonly retainedBytes: Lsn | undefined;
}

/** A primary's WAL archiver (pg_stat_archiver), while archive_mode is on. */
export interface ArchiverStatus {
  readonly archivedCount: number;
  readonly lastArchivedWal: string | undefined;
  readonly lastArchivedAt: Date | undefined;
  readonly failedCount: number;
  readonly lastFailedWal: string | undefined;
  readonly lastFailedAt: Date | undefined;
}

/** A primary: accepts writes, reports its current WAL position, its standbys and its slots. */
export interface PrimaryStatus extends Reachable {
  readonly role: 'primary';
  readonly currentLsn: Lsn;
  /**
   * synchronous_standby_names as its configuration files give it (ALTER SYSTEM writes them before
   * the reload applies them): what it runs from its next reload on. Undefined when unreadable.
   */
  readonly configuredSynchronousStandbyNames?: string;
  /**
   * A new session's transactions are read-only (`default_transaction_read_only`, what a
   * switchover's quiesce sets): out of recovery, yet it refuses every client's write.
   */
  readonly readOnly?: true;
  readonly standbys: readonly StandbyConnection[];
  readonly slots?: readonly SlotStatus[];
  /** Its archiver, when archive_mode is on (spec.backup); absent when it archives nothing. */
  readonly archiver?: ArchiverStatus;
}

/** A standby: what it has received (flushed) and replayed, and where it streams from. */
export interface ReplicaStatus extends Reachable {
  readonly role: 'replica';
  readonly receivedLsn: Lsn | undefined;
  readonly replayLsn: Lsn | undefined;
  readonly walReceiver: WalReceiverState | undefined;
  readonly replayPaused: boolean;
}

/** An instance the engine could not query, and why. */
export interface UnreachableStatus {
  readonly name: string;
  readonly reachable: false;
  readonly error: string;
  /**
   * The SQLSTATE the server answered with (too many clients, authentication failed, starting up,
   * shutting down, a statement cancelled): it is alive, refusing or busy. Absent when nothing
   * answered: connection refused, reset or timed out.
   */
  readonly sqlState?: string;
}

export type InstanceStatus = PrimaryStatus | ReplicaStatus | UnreachableStatus;

const optionalLsn = (value: string | null): Lsn | undefined => (value === null ? undefined : parseLsn(value));

/** Queries one instance through `pg`; never throws: an instance that cannot answer is unreachable. */
export async function observeInstance(
  endpoint: InstanceEndpoint,
  credentials: Credentials,
  options: ConnectOptions,
): Promise<InstanceStatus> {
  try {
    return await withConnection(endpoint, credentials, options, async (client) => {
      const base = await client.query<{
        in_recovery: boolean;
        sync_names: string;
        checkpoint_tli: number;
        kept_aside: boolean | null;
      }>(
        // pg_stat_file outside the data directory is a superuser's right: others see nothing.
        `SELECT pg_is_in_recovery() AS in_recovery, current_setting('synchronous_standby_names') AS sync_names,
                (SELECT timeline_id FROM pg_control_checkpoint()) AS checkpoint_tli,
                CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
                     THEN (pg_stat_file(current_setting('data_directory') || '.before-clone', true)).isdir
                END AS kept_aside`,
      );
      const row = base.rows[0];
      if (!row) throw new Error('no row from the status query');
      const kept = row.kept_aside === true ? { formerDataKeptAside: true as const } : {};
      if (!row.in_recovery) {
        // Read from the WAL file name: the checkpoint's timeline lags behind a fresh promotion.
        // transaction_read_only of this fresh session: what a client connecting now would get.
        // The archiver's row in the same round trip: pg_stat_archiver always has exactly one.
        const primary = await client.query<{
          lsn: string;
          walfile: string;
          read_only: boolean;
          archiving: boolean;
          archived_count: string;
          last_archived_wal: string | null;
          last_archived_time: Date | null;
          failed_count: string;
          last_failed_wal: string | null;
          last_failed_time: Date | null;
        }>(
          `SELECT pg_current_wal_lsn()::text AS lsn, pg_walfile_name(pg_current_wal_lsn()) AS walfile,
                  current_setting('transaction_read_only') = 'on' AS read_only,
                  current_setting('archive_mode') <> 'off' AS archiving, a.archived_count, a.last_archived_wal,
                  a.last_archived_time, a.failed_count, a.last_failed_wal, a.last_failed_time
             FROM pg_stat_archiver AS a`,
        );
        const standbys = await client.query<{
          application_name: string;
          state: string;
          sync_state: string;
          flush_lsn: string | null;
          replay_lsn: string | null;
        }>(
          `SELECT application_name, state, sync_state, flush_lsn::text, replay_lsn::text
             FROM pg_stat_replication ORDER BY application_name`,
        );
        // The operator connects as a superuser (pg_file_settings is theirs and pg_read_all_settings'):
        // a refusal leaves the value unknown rather than the instance unreachable.
        const configured = await client
          .query<{ setting: string }>(
            `SELECT setting FROM pg_file_settings
              WHERE name = 'synchronous_standby_names' AND error IS NULL ORDER BY seqno DESC LIMIT 1`,
          )
          .then(
            (r) => r.rows[0]?.setting ?? '',
            () => undefined,
          );
        const slots = await client.query<{ slot_name: string; active: boolean; retained: string | null }>(
          `SELECT slot_name, active, (pg_current_wal_lsn() - restart_lsn)::text AS retained
             FROM pg_replication_slots WHERE slot_type = 'physical' ORDER BY slot_name`,
        );
        const p = primary.rows[0];
        if (!p) throw new Error('no row from pg_current_wal_lsn()');
        return {
          name: endpoint.name,
          reachable: true,
          role: 'primary',
          timeline: Number.parseInt(p.walfile.slice(0, 8), 16),
          synchronousStandbyNames: row.sync_names,
          ...(configured === undefined ? {} : { configuredSynchronousStandbyNames: configured }),
          ...kept,
          currentLsn: parseLsn(p.lsn),
          ...(p.read_only ? { readOnly: true as const } : {}),
          standbys: standbys.rows.map((s) => ({
            applicationName: s.application_name,
            state: s.state,
            syncState: s.sync_state,
            flushLsn: optionalLsn(s.flush_lsn),
            replayLsn: optionalLsn(s.replay_lsn),
          })),
          slots: slots.rows.map((s) => ({
            name: s.slot_name,
            active: s.active,
            retainedBytes: s.retained === null ? undefined : BigInt(s.retained),
          })),
          ...(p.archiving
            ? {
                archiver: {
                  archivedCount: Number(p.archived_count),
                  lastArchivedWal: p.last_archived_wal ?? undefined,
                  lastArchivedAt: p.last_archived_time ?? undefined,
                  failedCount: Number(p.failed_count),
                  lastFailedWal: p.last_failed_wal ?? undefined,
                  lastFailedAt: p.last_failed_time ?? undefined,
                },
              }
            : {}),
        } satisfies PrimaryStatus;
      }
      const replica = await client.query<{
        received: string | null;
        replayed: string | null;
        paused: boolean;
        status: string | null;
        sender_host: string | null;
        sender_port: number | null;
        received_tli: number | null;
        silent_ms: number | null;
      }>(
        `SELECT pg_last_wal_receive_lsn()::text AS received, pg_last_wal_replay_lsn()::text AS replayed,
                pg_is_wal_replay_paused() AS paused, r.status, r.sender_host, r.sender_port, r.received_tli,
                (extract(epoch FROM clock_timestamp() - r.last_msg_receipt_time) * 1000)::float8 AS silent_ms
           FROM (SELECT 1) AS one LEFT JOIN pg_stat_wal_receiver AS r ON true`,
      );
      const r = replica.rows[0];
      if (!r) throw new Error('no row from the standby status query');
      return {
        name: endpoint.name,
        reachable: true,
        role: 'replica',
        timeline: r.received_tli ?? row.checkpoint_tli,
        synchronousStandbyNames: row.sync_names,
        ...kept,
        receivedLsn: optionalLsn(r.received),
        replayLsn: optionalLsn(r.replayed),
        replayPaused: r.paused,
        walReceiver:
          r.status === null
            ? undefined
            : {
                status: r.status,
                senderHost: r.sender_host ?? undefined,
                senderPort: r.sender_port ?? undefined,
                ...(r.silent_ms === null ? {} : { silentForMs: r.silent_ms }),
              },
      } satisfies ReplicaStatus;
    });
  } catch (error) {
    // Only the server itself sends an error with a SQLSTATE; socket errors carry none.
    const sqlState = error instanceof pg.DatabaseError ? error.code : undefined;
    return {
      name: endpoint.name,
      reachable: false,
      error: errorMessage(error),
      ...(sqlState === undefined ? {} : { sqlState }),
    };
  }
}

/**
 * Whether the instance's server answers at all, with data or with an error (too many clients,
 * shutting down): a fence waits until it does not, so an instance refusing connections is never
 * taken for stopped.
 */
export async function stillAnswers(
  endpoint: InstanceEndpoint,
  credentials: Credentials,
  options: ConnectOptions,
): Promise<boolean> {
  const status = await observeInstance(endpoint, credentials, options);
  return status.reachable || status.sqlState !== undefined;
}

/** The furthest WAL position a replica is known to hold: received, else replayed. */
export function replicaPosition(status: ReplicaStatus): Lsn | undefined {
  if (status.receivedLsn === undefined) return status.replayLsn;
  if (status.replayLsn === undefined) return status.receivedLsn;
  return status.receivedLsn > status.replayLsn ? status.receivedLsn : status.replayLsn;
}
