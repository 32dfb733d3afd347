import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
