// A primary whose volume was lost, on real PostgreSQL 15 processes: the entrypoint never makes an
// empty new primary for a cluster that already holds data (its replicas would follow it, and the
// application would find an empty database), and a replica whose data is intact starts as a
// standby without a primary, so the failover engine can promote it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { withConnection, defaultConnectOptions } from '../instance/instance.ts';
import { observeInstance } from '../instance/observe.ts';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';

describe('a lost primary volume, on real PostgreSQL 15 processes', () => {
  const bed = new PostgresTestBed('lost-volume');
  let primary: TestInstance;
  let replica: TestInstance;

  beforeAll(async () => {
    primary = await bed.start('pg-0', { role: 'primary' });
    replica = await bed.start('pg-1', { role: 'replica', primary });
    await withConnection(primary, bed.superuser, defaultConnectOptions, async (c) => {
      await c.query('CREATE TABLE kept (id int PRIMARY KEY)');
      await c.query('INSERT INTO kept SELECT generate_series(1, 100)');
    });
  });
  afterAll(() => bed.cleanup());

  it('refuses to initdb an empty primary once the cluster was bootstrapped, and says why', async () => {
    const proc = await bed.runEntrypoint('pg-9', { role: 'primary', env: { PG_INITDB: 'refused' } });
    const madeCluster = join(bed.root, 'pg-9', 'data', 'PG_VERSION');
    await waitUntil(
      'the entrypoint exits or makes a cluster',
      async () => !proc.isRunning() || existsSync(madeCluster),
      {
        timeoutMs: 60_000,
      },
    );
    expect(existsSync(madeCluster), 'no new cluster was made').toBe(false);
    expect(await proc.exited).not.toBe(0);
    expect(readFileSync(bed.terminationLog('pg-9'), 'utf8')).toMatch(/empty.*refus/i);
  });

  it('starts a replica with intact data as a standby while no primary answers', async () => {
    await replica.stopFast();
    await primary.kill9();
    const restarted = await bed.start('pg-1', {
      role: 'replica',
      primary,
      env: { PG_PRIMARY_WAIT_SECONDS: '2' },
    });
    const observed = await observeInstance(restarted, bed.superuser, defaultConnectOptions);
    expect(observed).toMatchObject({ reachable: true, role: 'replica' });
    const rows = await withConnection(restarted, bed.superuser, defaultConnectOptions, (c) =>
      c.query<{ n: string }>('SELECT count(*) AS n FROM kept'),
    );
    expect(rows.rows[0]?.n).toBe('100');
  });
});
