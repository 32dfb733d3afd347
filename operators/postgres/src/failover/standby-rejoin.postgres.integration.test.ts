// A standby whose data went past the point where another standby was promoted, on real PostgreSQL
// 15 processes: it received WAL the new primary never had (the old primary's last records, or its
// shutdown checkpoint), so it cannot follow the new timeline as it is. Found by
// bench:chaos:postgres (every instance pod deleted: one replica crash-looped with "requested
// timeline is not a child of this server's history" for good). Its entrypoint rewinds it.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { withConnection, defaultConnectOptions } from '../instance/instance.ts';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';

/** A port that accepts connections and never answers: a standby pointed at it stops receiving. */
async function deadEnd(): Promise<{ port: number; server: Server }> {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

describe('a standby ahead of the promoted one, on real PostgreSQL 15 processes', () => {
  const bed = new PostgresTestBed('standby-rejoin');
  let primary: TestInstance;
  let promoted: TestInstance;
  let ahead: TestInstance;
  let dead: { port: number; server: Server };
  const sql = (instance: TestInstance, text: string) =>
    withConnection(instance, bed.superuser, defaultConnectOptions, (c) => c.query(text));

  beforeAll(async () => {
    dead = await deadEnd();
    primary = await bed.start('pg-0', { role: 'primary' });
    promoted = await bed.start('pg-1', { role: 'replica', primary });
    ahead = await bed.start('pg-2', { role: 'replica', primary });
    await sql(primary, 'CREATE TABLE t (id int PRIMARY KEY)');
    await sql(primary, 'INSERT INTO t SELECT generate_series(1, 100)');
  });
  afterAll(async () => {
    await bed.cleanup();
    dead.server.close();
  });

  it('is rewound onto the new primary and streams from it', async () => {
    const rows = async (i: TestInstance) => Number((await sql(i, 'SELECT count(*) AS n FROM t')).rows[0]?.n);
    await waitUntil(
      'both standbys have 100 rows',
      async () => (await rows(promoted)) === 100 && (await rows(ahead)) === 100,
      {
        timeoutMs: 30_000,
      },
    );
    // pg-1 stops receiving; pg-0 writes on and pg-2 receives it.
    await sql(
      promoted,
      `ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=${dead.port} connect_timeout=1'`,
    );
    await sql(promoted, 'SELECT pg_reload_conf()');
    await sql(primary, 'INSERT INTO t SELECT generate_series(101, 200)');
    await waitUntil('pg-2 has 200 rows', async () => (await rows(ahead)) === 200, { timeoutMs: 30_000 });
    // pg-2 stops cleanly; pg-1, which never got rows 101-200, is promoted; the old primary dies.
    await ahead.stopFast();
    await sql(promoted, 'SELECT pg_promote(true, 30)');
    await primary.kill9();
    await sql(promoted, 'INSERT INTO t SELECT generate_series(1001, 1010)');

    const rejoined = await bed.start('pg-2', { role: 'replica', primary: promoted });
    await waitUntil(
      'pg-2 streams the new primary: 110 rows',
      async () => (await rows(rejoined).catch(() => 0)) === 110,
      {
        timeoutMs: 60_000,
      },
    );
    expect(bed.entrypointLog('pg-2').join('\n')).toMatch(/pg_rewind/);
  });
});
