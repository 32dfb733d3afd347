// SQL against the plain PostgreSQL servers of the backup benchmarks (bench:backup-tools and
// bench:backup), and the steps both time: long statements (a fill of a gigabyte) get a generous
// statement timeout; waits for the archiver to have pushed a segment and for a restored server to
// be promoted.
import { waitUntil } from '@homeostat/testing';
import { withConnection, defaultConnectOptions } from '../../operators/postgres/src/instance/instance.ts';
import {
  trustSuperuser,
  type PlainInstance,
  type PlainPostgresBed,
} from '../../operators/postgres/src/test-support/plain-postgres.ts';

/** Runs `work` and resolves with its result and the seconds it took. */
export async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const result = await work();
  return [result, Number(process.hrtime.bigint() - start) / 1e9];
}

/** The rows of `text`, as the superuser, on a connection of its own. */
export function query<T extends Record<string, unknown>>(
  instance: PlainInstance,
  text: string,
): Promise<T[]> {
  return withConnection(
    instance,
    trustSuperuser,
    { ...defaultConnectOptions, statementTimeoutMs: 1_800_000 },
    async (c) => (await c.query<T>(text)).rows,
  );
}

/** The first row of `text`; a statement that returns none is an error. */
export async function one<T extends Record<string, unknown>>(
  instance: PlainInstance,
  text: string,
): Promise<T> {
  const row = (await query<T>(instance, text))[0];
  if (!row) throw new Error(`no row from ${text}`);
  return row;
}

/** Waits until the archiver has pushed `segment` (or a later one). */
export async function archived(instance: PlainInstance, segment: string, timeoutMs: number): Promise<void> {
  await waitUntil(
    `segment ${segment} archived`,
    async () => {
      const row = await one<{ last: string | null }>(
        instance,
        'SELECT last_archived_wal AS last FROM pg_stat_archiver',
      );
      return (row.last ?? '') >= segment;
    },
    { timeoutMs, intervalMs: 50 },
  );
}

/** Closes the current WAL segment and returns its name. */
export async function switchSegment(instance: PlainInstance): Promise<string> {
  return (await one<{ w: string }>(instance, 'SELECT pg_walfile_name(pg_switch_wal()) AS w')).w;
}

/**
 * Starts a restored data directory (its recovery settings written) without archiving of its own,
 * and resolves once replay has ended and the server is promoted. `env` carries what its
 * restore_command needs.
 */
export async function startUntilPromoted(
  bed: PlainPostgresBed,
  dataDir: string,
  env: Readonly<Record<string, string>>,
): Promise<PlainInstance> {
  const server = await bed.start('restored', dataDir, { settings: { archive_mode: 'off' }, env });
  await waitUntil(
    'the restored server promoted',
    async () => (await one<{ r: boolean }>(server, 'SELECT pg_is_in_recovery() AS r')).r === false,
    { timeoutMs: 1_800_000, intervalMs: 100 },
  );
  return server;
}
