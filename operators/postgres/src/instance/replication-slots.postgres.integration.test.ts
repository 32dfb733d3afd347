import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster } from '../test-support/test-cluster.ts';
import { observeInstance } from './observe.ts';
import { defaultConnectOptions } from './instance.ts';

describe('replication slots, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'slots' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  const slotNames = async () =>
    (
      await cluster.sql<{ slot_name: string }>(
        'pg-0',
        'SELECT slot_name FROM pg_replication_slots ORDER BY 1',
      )
    ).map((r) => r.slot_name);

  it('bounds the WAL a slot may keep, by default a quarter of the volume', async () => {
    const [row] = await cluster.sql<{ v: string }>(
      'pg-0',
      "SELECT setting AS v FROM pg_settings WHERE name = 'max_slot_wal_keep_size'",
    );
    expect(Number(row?.v)).toBeGreaterThan(0); // -1 (PostgreSQL's default) keeps WAL without bound
  });

  it('reports what each slot retains, and drops the slot of an instance that was removed', async () => {
    const primary = await observeInstance(
      cluster.instance('pg-0'),
      cluster.bed.superuser,
      defaultConnectOptions,
    );
    expect(primary.reachable && primary.role === 'primary' && primary.slots?.map((s) => s.name)).toEqual([
      'homeostat_pg_1',
      'homeostat_pg_2',
    ]);
    if (primary.reachable && primary.role === 'primary') {
      for (const slot of primary.slots ?? []) expect(slot.retainedBytes).toBeGreaterThanOrEqual(0n);
    }
    // pg-2 is scaled away: its process stops and it leaves the instances the engine manages.
    await cluster.instance('pg-2').stopFast();
    expect(await slotNames()).toEqual(['homeostat_pg_1', 'homeostat_pg_2']);
    const engine = cluster.engine({ instances: cluster.endpoints.filter((e) => e.name !== 'pg-2') });
    await engine.tick();
    expect(await slotNames()).toEqual(['homeostat_pg_1']);
    expect(cluster.events.map((e) => `${e.type} ${e.message}`)).toContain(
      'slots-dropped dropped the replication slots of removed instances: homeostat_pg_2',
    );
  });

  it('makes again the slot of a replica that runs without one, and the replica streams again', async () => {
    // A failover's routing step can fail to make a repointed replica's slot (a loaded primary's
    // timeout); the replica then retries for ever with "replication slot ... does not exist".
    // Here the slot goes under a streaming replica: its walsender ended, then the slot dropped.
    // The replica reconnects within its retry interval, so its walsender is ended and the slot
    // dropped in one round trip, again until the drop wins.
    await waitUntil(
      "pg-1's slot dropped",
      async () =>
        cluster
          .sql(
            'pg-0',
            `SELECT pg_terminate_backend(active_pid, 5000) FROM pg_replication_slots
               WHERE slot_name = 'homeostat_pg_1' AND active;
             SELECT pg_drop_replication_slot('homeostat_pg_1')`,
          )
          .then(
            () => true,
            () => false,
          ),
      { timeoutMs: 30_000 },
    );
    expect(await slotNames()).not.toContain('homeostat_pg_1');
    const engine = cluster.engine({ instances: cluster.endpoints.filter((e) => e.name !== 'pg-2') });
    await engine.tick();
    expect(await slotNames()).toContain('homeostat_pg_1');
    expect(cluster.events.map((e) => `${e.type} ${e.message}`)).toContain(
      'slots-created made the replication slots of pg-1 on pg-0 again: they ran without one',
    );
    await cluster.sql('pg-0', 'CREATE TABLE after_slot AS SELECT generate_series(1, 100) AS id');
    await waitUntil(
      'pg-1 streams through its slot again and has the 100 rows',
      async () => {
        const [slot] = await cluster.sql<{ active: boolean }>(
          'pg-0',
          "SELECT active FROM pg_replication_slots WHERE slot_name = 'homeostat_pg_1'",
        );
        const rows = await cluster
          .sql<{ n: string }>('pg-1', 'SELECT count(*) AS n FROM after_slot')
          .catch(() => [{ n: '0' }]);
        return slot?.active === true && rows[0]?.n === '100';
      },
      { timeoutMs: 30_000 },
    );
  });
});
