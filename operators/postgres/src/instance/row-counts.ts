// Counting each database's tables and rows at one WAL position (ADR 0221): on a streaming standby
// whose replay is paused, every query sees exactly the commits replayed through that position, as
// a restored copy paused at the same position does. The drill pod runs the very same query text
// (the operator hands it over in its environment), so both sides count alike.
import type pg from 'pg';
import { formatLsn, parseLsn, type Lsn } from './lsn.ts';
import {
  errorMessage,
  withConnection,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from './instance.ts';

/**
 * One database's tables, rows and a digest of the per-table counts: one row. Tables are the
 * permanent ones outside the system schemas (an unlogged or temporary table cannot be read during
 * recovery, and has no rows in a restored copy anyway); a partitioned table is counted through its
 * partitions only, so no row counts twice; a materialized view never refreshed cannot be read. The
 * digest (md5 of `schema.table=rows`, in byte order of the names) tells two databases of equal
 * totals apart whose rows sit in different tables.
 */
export const rowCountQuery = `SELECT count(*)::bigint AS tables, coalesce(sum(n), 0)::bigint AS rows,
       md5(coalesce(string_agg(format('%I.%I=%s', s, t, n), ',' ORDER BY s COLLATE "C", t COLLATE "C"), '')) AS digest
  FROM (SELECT ns.nspname AS s, c.relname AS t,
               (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I', ns.nspname, c.relname), false, true, '')))[1]::text::bigint AS n
          FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p' AND c.relispopulated
           AND ns.nspname NOT IN ('pg_catalog', 'information_schema')
           AND ns.nspname NOT LIKE 'pg\\_toast%' AND ns.nspname NOT LIKE 'pg\\_temp%') AS counted`;

/** The databases counted, in this order, at most 20 (the same text as the drill's, instance.sh). */
export const countedDatabasesQuery =
  'SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname LIMIT 20';

/** One database as rowCountQuery counts it. */
export interface DatabaseCounts {
  readonly name: string;
  readonly tables: number;
  readonly rows: number;
  readonly digest: string;
}

/** Every database of an instance counted at one replayed position. */
export interface CountsAt {
  /** The position: the standby's pg_last_wal_replay_lsn() while paused. */
  readonly lsn: string;
  readonly databases: readonly DatabaseCounts[];
}

/** How one standby is reached and how long a count may keep its replay paused. */
export interface PausedCountInput {
  readonly endpoint: InstanceEndpoint;
  readonly credentials: Credentials;
  readonly connect: ConnectOptions;
  /** The count waits (before pausing) until the standby has replayed this far. */
  readonly replayedAtLeast?: Lsn;
  /** The bound of the whole count, catching up and pausing included, in ms. */
  readonly timeoutMs: number;
  /** How often a wait looks again (ms; default 100). */
  readonly pollMs?: number;
  /** Stops the count between steps (the operator shutting down); the replay is resumed still. */
  readonly signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a standby's replay is paused, and where it stands. */
async function pausedAt(c: pg.Client): Promise<{ paused: boolean; lsn: string }> {
  const { rows } = await c.query<{ state: string; lsn: string | null }>(
    'SELECT pg_get_wal_replay_pause_state() AS state, pg_last_wal_replay_lsn()::text AS lsn',
  );
  return { paused: rows[0]?.state === 'paused', lsn: rows[0]?.lsn ?? '' };
}

/**
 * Pauses `endpoint`'s replay, counts each database at the position it paused at, and resumes the
 * replay whatever happened (a resume that fails is reported: the next count resumes it first, see
 * resumeReplay). Throws, saying which step, when the bound passes or a query fails.
 */
export async function countAtPausedReplay(input: PausedCountInput): Promise<CountsAt> {
  const deadline = Date.now() + input.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const on = <T>(database: string, work: (client: pg.Client) => Promise<T>) =>
    withConnection(
      input.endpoint,
      { ...input.credentials, database },
      { connectTimeoutMs: input.connect.connectTimeoutMs, statementTimeoutMs: Math.min(left(), 2 ** 31 - 1) },
      work,
    );
  const waitFor = async (what: string, check: () => Promise<boolean>) => {
    while (!(await check())) {
      input.signal?.throwIfAborted();
      if (Date.now() >= deadline) throw new Error(`${what} not within ${input.timeoutMs} ms`);
      await sleep(input.pollMs ?? 100);
    }
  };
  const name = input.endpoint.name;
  if (input.replayedAtLeast !== undefined) {
    const target = formatLsn(input.replayedAtLeast);
    await waitFor(`standby ${name} replaying to ${target}`, () =>
      on('postgres', async (c) => {
        const { rows } = await c.query<{ ok: boolean | null }>(
          'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok',
          [target],
        );
        return rows[0]?.ok === true;
      }),
    );
  }
  let failure: unknown;
  try {
    await on('postgres', (c) => c.query('SELECT pg_wal_replay_pause()'));
    await waitFor(
      `the replay of standby ${name} pausing`,
      async () => (await on('postgres', pausedAt)).paused,
    );
    return await on('postgres', async (c) => {
      const { lsn } = await pausedAt(c);
      parseLsn(lsn);
      const names = (await c.query<{ datname: string }>(countedDatabasesQuery)).rows.map((r) => r.datname);
      const databases: DatabaseCounts[] = [];
      for (const database of names) {
        input.signal?.throwIfAborted();
        const counted = await on(database, async (d) => {
          const { rows } = await d.query<{ tables: string; rows: string; digest: string }>(rowCountQuery);
          return rows[0];
        }).catch((error: unknown) => {
          throw new Error(`counting database ${database} on ${name}: ${errorMessage(error)}`);
        });
        if (!counted) throw new Error(`counting database ${database} on ${name} returned no row`);
        databases.push({
          name: database,
          tables: Number(counted.tables),
          rows: Number(counted.rows),
          digest: counted.digest,
        });
      }
      // A standby restarted meanwhile (a rollout, a crash) replays again: what was counted after
      // that is not the state at L, and compared with a copy at L it would differ for nothing.
      const after = await pausedAt(c);
      if (!after.paused || after.lsn !== lsn)
        throw new Error(
          `the replay of ${name} moved during the count (from ${lsn} to ${after.lsn || 'unknown'})`,
        );
      return { lsn, databases };
    });
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    // Resumed even after a failure: a standby left paused falls behind for as long as it stays so.
    await resumeReplay(input.endpoint, input.credentials, input.connect).catch((error: unknown) => {
      if (failure === undefined) throw new Error(`resuming the replay of ${name}: ${errorMessage(error)}`);
    });
  }
}

/**
 * Resumes the replay of a standby that is paused (or pausing); true when it was. A paused standby
 * falls behind its primary with every commit; only a count (above) pauses one, so one found paused
 * outside a count was left so by a count that never ended (an operator that stopped mid-way).
 */
export async function resumeReplay(
  endpoint: InstanceEndpoint,
  credentials: Credentials,
  connect: ConnectOptions,
): Promise<boolean> {
  return withConnection(endpoint, credentials, connect, async (c) => {
    const { rows } = await c.query<{ resumed: boolean }>(
      `SELECT pg_is_in_recovery() AND pg_get_wal_replay_pause_state() <> 'not paused' AS resumed`,
    );
    const resumed = rows[0]?.resumed === true;
    if (resumed) await c.query('SELECT pg_wal_replay_resume()');
    return resumed;
  });
}
