// Counting at a paused standby's replay position on real PostgreSQL processes (a primary and one
// streaming standby started through the entrypoint): the count under a write load, the replay
// resumed after it (also when the count fails while paused), a count refused when the replay moved
// under it, a standby left paused by a count that never ended resumed, and which standbys a
// primary's commits wait to be applied on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster } from '../test-support/test-cluster.ts';
import { loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import { primaryBeforeCount } from './archive-position.ts';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { parseLsn } from './lsn.ts';
import { countAtPausedReplay, resumeReplay } from './row-counts.ts';

describe('row counts at a paused replay position, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 2, label: 'rowcounts' });
  const pauseState = async () =>
    (await cluster.sql<{ state: string }>('pg-1', 'SELECT pg_get_wal_replay_pause_state() AS state'))[0]
      ?.state;
  const count = (timeoutMs = 30_000) =>
    countAtPausedReplay({
      endpoint: cluster.instance('pg-1'),
      credentials: cluster.bed.superuser,
      connect: defaultConnectOptions,
      timeoutMs,
    });

  beforeAll(async () => {
    await cluster.start();
    await cluster.sql('pg-0', 'CREATE DATABASE shop');
    const shop = { ...cluster.bed.superuser, database: 'shop' };
    await withConnection(cluster.instance('pg-0'), shop, defaultConnectOptions, async (c) => {
      await c.query('CREATE TABLE orders (id int, at date) PARTITION BY RANGE (at)');
      await c.query(
        "CREATE TABLE orders_2026 PARTITION OF orders FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
      );
      await c.query("INSERT INTO orders SELECT g, '2026-06-01' FROM generate_series(1, 40) g");
      await c.query('CREATE TABLE "Mixed Case" (x int)');
      await c.query('INSERT INTO "Mixed Case" VALUES (1), (2)');
      // Neither can be read during recovery: an unlogged table, a materialized view never filled.
      await c.query('CREATE UNLOGGED TABLE scratch AS SELECT 1 AS x');
      await c.query('CREATE MATERIALIZED VIEW later AS SELECT 1 AS x WITH NO DATA');
    });
    await cluster.waitCaughtUp('pg-1', 'pg-0');
  });
  afterAll(() => cluster.cleanup());

  it('counts each database at the paused position under a steady write load, then resumes the replay', async () => {
    const load = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const counts = await count();
      expect(parseLsn(counts.lsn)).toBeGreaterThan(0n);
      expect(counts.databases.map((d) => d.name)).toEqual(['postgres', 'shop']);
      // Partitions count once (the partitioned table itself is not counted); the unlogged table
      // and the unfilled view are left out rather than failing the count.
      expect(counts.databases[1]).toMatchObject({ name: 'shop', tables: 2, rows: 42 });
      expect(counts.databases[1]?.digest).toMatch(/^[0-9a-f]{32}$/);
      // The acked rows are written one at a time, ids rising: a snapshot at one position holds
      // exactly ids 1..n, so the count is n. The load went on writing meanwhile.
      const acked = counts.databases[0]?.rows ?? 0;
      expect(acked).toBeGreaterThan(0);
      expect(load.acked.length).toBeGreaterThan(acked);
      expect(await pauseState()).toBe('not paused');
      await load.stop();
      await cluster.waitCaughtUp('pg-1', 'pg-0');
      const again = await count();
      expect(parseLsn(again.lsn)).toBeGreaterThan(parseLsn(counts.lsn));
      expect(again.databases[0]?.rows).toBe(load.acked.length);
      // Unchanged tables, unchanged digest: it depends on the counts alone.
      expect(again.databases[1]).toEqual(counts.databases[1]);
    } finally {
      await load.stop();
    }
  });

  /**
   * Holds an ACCESS EXCLUSIVE lock on shop's "Mixed Case" in an open transaction on the primary,
   * replayed on the standby (a count there waits for it), until `release` commits it.
   */
  const holdLock = async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (locked = resolve));
    const holder = withConnection(
      cluster.instance('pg-0'),
      { ...cluster.bed.superuser, database: 'shop' },
      defaultConnectOptions,
      async (c) => {
        await c.query('BEGIN');
        await c.query('LOCK TABLE "Mixed Case" IN ACCESS EXCLUSIVE MODE');
        await c.query('SELECT pg_switch_wal()');
        locked();
        await released;
        await c.query('COMMIT');
      },
    );
    await held;
    await cluster.waitCaughtUp('pg-1', 'pg-0');
    return async () => {
      release();
      await holder;
    };
  };

  it('resumes the replay when the count fails while paused (a table the primary holds locked)', async () => {
    const release = await holdLock();
    try {
      await expect(count(3000)).rejects.toThrow(/counting database shop on pg-1/);
      expect(await pauseState()).toBe('not paused');
    } finally {
      await release();
    }
  });

  it('refuses counts taken while the replay moved (a standby restarted or resumed mid-count)', async () => {
    const release = await holdLock();
    try {
      const counting = count(20_000);
      // Once the count has paused the replay and waits on the lock in shop (its query blocked: it
      // is past its own wait for the pause), resume the replay, as a restart of the standby would,
      // and let the lock go, so the count ends on a moved standby. (Resumed as soon as the pause
      // shows, the count could still be waiting to see it, and would time out on that instead.)
      await waitUntil(
        'the count paused the replay and waits on the lock',
        async () =>
          (await pauseState()) === 'paused' &&
          (
            await cluster.sql(
              'pg-1',
              "SELECT 1 FROM pg_stat_activity WHERE datname = 'shop' AND wait_event_type = 'Lock'",
            )
          ).length > 0,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      await cluster.sql('pg-1', 'SELECT pg_wal_replay_resume()');
      await release();
      await expect(counting).rejects.toThrow(/the replay of pg-1 moved during the count \(from /);
      expect(await pauseState()).toBe('not paused');
    } finally {
      await release();
    }
  });

  it('resumes a standby left paused by a count that never ended, and nothing else', async () => {
    await cluster.sql('pg-1', 'SELECT pg_wal_replay_pause()');
    expect(await resumeReplay(cluster.instance('pg-1'), cluster.bed.superuser, defaultConnectOptions)).toBe(
      true,
    );
    expect(await pauseState()).toBe('not paused');
    expect(await resumeReplay(cluster.instance('pg-1'), cluster.bed.superuser, defaultConnectOptions)).toBe(
      false,
    );
    expect(await resumeReplay(cluster.instance('pg-0'), cluster.bed.superuser, defaultConnectOptions)).toBe(
      false,
    );
  });

  it('names the standbys commits wait to be applied on: only with synchronous_commit = remote_apply', async () => {
    const waitFor = async () =>
      (await primaryBeforeCount(cluster.instance('pg-0'), cluster.bed.superuser, defaultConnectOptions))
        .applyWaitsFor;
    const set = async (sync: string, commit: string) => {
      await cluster.sql('pg-0', `ALTER SYSTEM SET synchronous_standby_names = '"${sync}"'`);
      await cluster.sql('pg-0', `ALTER SYSTEM SET synchronous_commit = '${commit}'`);
      await cluster.sql('pg-0', 'SELECT pg_reload_conf()');
    };
    try {
      await set('pg-1', 'on');
      expect(await waitFor()).toEqual([]);
      await set('pg-1', 'remote_apply');
      expect(await waitFor()).toEqual(['pg-1']);
    } finally {
      await cluster.sql('pg-0', 'ALTER SYSTEM RESET synchronous_standby_names');
      await cluster.sql('pg-0', 'ALTER SYSTEM RESET synchronous_commit');
      await cluster.sql('pg-0', 'SELECT pg_reload_conf()');
    }
  });
});
