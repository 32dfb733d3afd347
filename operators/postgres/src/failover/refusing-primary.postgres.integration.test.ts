// A primary that answers with an error is alive: every connection slot taken, the operator's
// password refused, a server shutting down. Real PostgreSQL 15 processes produce each answer; the
// engine must tell them from a dead server and fail over only the dead one.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { defaultConnectOptions } from '../instance/instance.ts';
import { observeInstance, stillAnswers } from '../instance/observe.ts';
import { TestCluster } from '../test-support/test-cluster.ts';

describe('a primary that answers with an error, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({
    size: 2,
    label: 'refusing',
    parameters: 'max_connections = 8\nsuperuser_reserved_connections = 1',
  });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  const connectAsSuperuser = async () => {
    const primary = cluster.instance('pg-0');
    const client = new pg.Client({
      host: primary.host,
      port: primary.port,
      database: 'postgres',
      ...cluster.bed.superuser,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };

  /** Probes for longer than the failover delay (1 s) and returns what the engine did. */
  const probeThroughTheDelay = async (engine: ReturnType<TestCluster['engine']>) => {
    for (let i = 0; i < 8; i++) {
      await engine.tick();
      await sleep(250);
    }
  };

  it('every connection slot taken: too many clients, not failed over', async () => {
    const held: pg.Client[] = [];
    try {
      // Until the server refuses even the superuser: its reserved slot taken too.
      await waitUntil(
        'every slot of pg-0 taken',
        async () => {
          try {
            held.push(await connectAsSuperuser());
            return false;
          } catch (error) {
            return error instanceof pg.DatabaseError && error.code === '53300';
          }
        },
        { timeoutMs: 30_000, intervalMs: 0 },
      );
      const engine = cluster.engine();
      await probeThroughTheDelay(engine);
      expect(cluster.fenced).toEqual([]);
      expect(cluster.events.map((e) => e.type)).not.toContain('failover-started');
      expect(cluster.events.find((e) => e.type === 'refused')?.message).toMatch(
        /^failover refused \(primary-refusing\): the primary pg-0 answers but refuses the operator \(.*too many clients.*; SQLSTATE 53300\): it is alive/,
      );
      expect(engine.primary).toBe('pg-0');

      const seen = await observeInstance(
        cluster.instance('pg-0'),
        cluster.bed.superuser,
        defaultConnectOptions,
      );
      expect(seen).toMatchObject({ reachable: false, sqlState: '53300' });
      // A fence waiting for it to stop answering keeps waiting.
      expect(await stillAnswers(cluster.instance('pg-0'), cluster.bed.superuser, defaultConnectOptions)).toBe(
        true,
      );
    } finally {
      await Promise.all(held.map((c) => c.end().catch(() => undefined)));
    }
  });

  it("the operator's password refused: not failed over", async () => {
    const wrong = { ...cluster.bed.superuser, password: 'not-the-password' };
    const engine = cluster.engine({ credentials: wrong });
    await probeThroughTheDelay(engine);
    expect(cluster.fenced).toEqual([]);
    expect(engine.primary).toBe('pg-0');

    const seen = await observeInstance(cluster.instance('pg-0'), wrong, defaultConnectOptions);
    expect(seen).toMatchObject({ reachable: false, sqlState: '28P01' });
  });

  it('shutting down is an answer; once it has stopped, nothing answers', async () => {
    const session = await connectAsSuperuser();
    const primary = cluster.instance('pg-0');
    // A smart shutdown waits for the open session and refuses every new connection meanwhile.
    process.kill(primary.process.pid, 'SIGTERM');
    await waitUntil(
      'pg-0 answers that it is shutting down',
      async () => {
        const seen = await observeInstance(primary, cluster.bed.superuser, defaultConnectOptions);
        return !seen.reachable && seen.sqlState === '57P03';
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(await stillAnswers(primary, cluster.bed.superuser, defaultConnectOptions)).toBe(true);
    await session.end();
    await primary.process.exited;
    const gone = await observeInstance(primary, cluster.bed.superuser, defaultConnectOptions);
    expect(gone).toMatchObject({ reachable: false });
    expect(gone).not.toHaveProperty('sqlState');
    expect(await stillAnswers(primary, cluster.bed.superuser, defaultConnectOptions)).toBe(false);
  });
});
