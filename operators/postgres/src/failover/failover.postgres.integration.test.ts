import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster, missingIds } from '../test-support/test-cluster.ts';
import { loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import { observeInstance } from '../instance/observe.ts';
import { clusterView } from './cluster-view.ts';
import { defaultConnectOptions } from '../instance/instance.ts';

describe('failover after kill -9 of the primary, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'failover' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('promotes a replica, re-points the other, rewinds the old primary back in, and loses no row anywhere', async () => {
    const engine = cluster.engine({ failoverDelayMs: 1000 });
    const writer = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
    engine.start();
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 200, { timeoutMs: 30_000 });
      await cluster.instance('pg-0').kill9();
      const killedAt = Date.now();
      await waitUntil(
        'a new primary takes writes',
        async () => (writer.acked.at(-1)?.at ?? 0) > killedAt && engine.primary !== 'pg-0',
        {
          timeoutMs: 60_000,
          describe: () => cluster.events.map((e) => `${e.type} ${e.message}`).join('\n'),
        },
      );
      await waitUntil(
        'more writes on the new primary',
        async () => writer.acked.filter((a) => a.at > killedAt).length > 100,
        {
          timeoutMs: 30_000,
        },
      );
    } finally {
      await writer.stop();
      await engine.stop();
    }

    const newPrimary = engine.primary;
    expect(['pg-1', 'pg-2']).toContain(newPrimary);
    expect(cluster.fenced).toEqual(['pg-0']);
    expect(cluster.router.upstream).toBe(newPrimary);
    const promoted = cluster.events.find((e) => e.type === 'promoted');
    expect(promoted?.instance).toBe(newPrimary);
    // Fencing came before promotion.
    expect(cluster.events.findIndex((e) => e.type === 'fenced')).toBeLessThan(
      cluster.events.findIndex((e) => e.type === 'promoted'),
    );

    const status = await observeInstance(
      cluster.instance(newPrimary),
      cluster.bed.superuser,
      defaultConnectOptions,
    );
    expect(status).toMatchObject({ reachable: true, role: 'primary', timeline: 2 });

    // The other replica follows the new primary without a restart, and the old primary rejoined
    // through pg_rewind (its entrypoint says which method it used).
    const others = cluster.endpoints.map((e) => e.name).filter((n) => n !== newPrimary);
    for (const name of others) await cluster.waitCaughtUp(name, newPrimary);
    const follower = others.find((n) => n !== 'pg-0') ?? '';
    expect(cluster.bed.entrypointLog(follower).filter((l) => l.includes('exec postgres'))).toHaveLength(1);
    expect(cluster.bed.entrypointLog('pg-0')).toContainEqual(
      expect.stringContaining('rejoin: method=pg_rewind'),
    );

    expect(clusterView(await engine.observe()).primaries).toEqual([newPrimary]);
    // Same rows everywhere; every acknowledged write survived on this run's own count.
    const rows = await Promise.all(cluster.endpoints.map((e) => cluster.ids(e.name)));
    expect(rows[1]).toEqual(rows[0]);
    expect(rows[2]).toEqual(rows[0]);
    const lost = missingIds(writer.acked, rows[0] ?? []);
    // Asynchronous replication may lose the tail of what pg-0 acknowledged (the synchronous test
    // asserts zero); a loss must then be one contiguous tail, never a hole in the middle.
    const [firstLost, lastLost] = [lost[0], lost.at(-1)];
    if (firstLost !== undefined && lastLost !== undefined) {
      expect(writer.acked.filter((a) => a.id >= firstLost && a.id <= lastLost)).toHaveLength(lost.length);
    }
    console.warn(
      `failover: ${newPrimary} promoted, ${writer.acked.length} writes acknowledged, ${lost.length} lost (async)`,
    );
  });

  it('the new primary keeps replicating: a row written now reaches every instance', async () => {
    const primary = cluster.router.upstream ?? '';
    await cluster.sql(primary, "INSERT INTO acked (id, pad) VALUES (-1, 'after failover')");
    for (const e of cluster.endpoints) {
      await waitUntil(`row -1 on ${e.name}`, async () => (await cluster.ids(e.name)).includes(-1), {
        timeoutMs: 20_000,
      });
    }
  });
});

describe('failover from a frozen (unresponsive but alive) primary, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 2, label: 'frozen' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('fences the frozen primary (kills it) before promoting, so it can never take a write again', async () => {
    const engine = cluster.engine({
      failoverDelayMs: 1000,
      connect: { connectTimeoutMs: 1000, statementTimeoutMs: 5000 },
    });
    const writer = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
    engine.start();
    const old = cluster.instance('pg-0');
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 100, { timeoutMs: 30_000 });
      old.freeze(); // every process of the instance stops, its sockets stay open
      const frozenAt = Date.now();
      await waitUntil('writes on pg-1', async () => writer.acked.filter((a) => a.at > frozenAt).length > 50, {
        timeoutMs: 60_000,
        describe: () => cluster.events.map((e) => `${e.type} ${e.message}`).join('\n'),
      });
    } finally {
      await writer.stop();
      await engine.stop();
    }
    expect(engine.primary).toBe('pg-1');
    const types = cluster.events.map((e) => e.type);
    expect(types.indexOf('fenced')).toBeGreaterThan(-1);
    expect(types.indexOf('fenced')).toBeLessThan(types.indexOf('promoted'));
    expect(cluster.fenced).toEqual(['pg-0']);
    // The frozen process is gone; what runs on pg-0's port now is its rejoined replica.
    await cluster.waitCaughtUp('pg-0', 'pg-1');
    expect(missingIds(writer.acked, await cluster.ids('pg-1')).length).toBeLessThanOrEqual(
      writer.acked.length,
    );
    expect(await cluster.ids('pg-0')).toEqual(await cluster.ids('pg-1'));
  });
});
