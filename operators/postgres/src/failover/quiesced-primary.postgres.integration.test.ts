// A switchover that does not happen gives writes back to the primary it quiesced; when that undo
// fails (the connection lost at that moment), the primary is left read-only with writes withdrawn
// and nothing in progress. The engine's next probe must find it so and give writes back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { quiesceWrites } from '../instance/control.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { observeInstance } from '../instance/observe.ts';
import { TestCluster } from '../test-support/test-cluster.ts';

describe('a primary left quiesced, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 2, label: 'quiesced' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  /** One INSERT through the router (the tests' read-write Service), as a client writes. */
  const writeThroughRouter = (id: number) =>
    withConnection(
      { name: 'rw', host: '127.0.0.1', port: cluster.router.port },
      cluster.bed.superuser,
      defaultConnectOptions,
      (client) => client.query('INSERT INTO acked (id) VALUES ($1)', [id]),
    );

  it('is found read-only and given writes back on the next probe', async () => {
    const pg0 = cluster.instance('pg-0');
    const target = { endpoint: pg0, credentials: cluster.bed.superuser, options: defaultConnectOptions };
    // What a failed undo leaves behind: the quiesce's two effects, and nothing else.
    await cluster.router.withdrawWrites(pg0);
    await quiesceWrites(target);
    await waitUntil(
      'pg-0 read-only for a new session',
      async () =>
        (
          await cluster.sql<{ ro: string }>('pg-0', "SELECT current_setting('transaction_read_only') AS ro")
        )[0]?.ro === 'on',
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(await observeInstance(pg0, cluster.bed.superuser, defaultConnectOptions)).toMatchObject({
      role: 'primary',
      readOnly: true,
    });
    await expect(writeThroughRouter(-1)).rejects.toThrow();

    const engine = cluster.engine();
    expect(await engine.tick()).toBeUndefined();
    expect(engine.state).toEqual({ currentPrimary: 'pg-0', targetPrimary: 'pg-0' });
    expect(cluster.router.upstream).toBe('pg-0');
    // The reload reaches new sessions a moment after pg_reload_conf() returns.
    await waitUntil('a write through the router', async () => (await writeThroughRouter(-2)).rowCount === 1, {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    const after = await observeInstance(pg0, cluster.bed.superuser, defaultConnectOptions);
    expect(after).toMatchObject({ role: 'primary' });
    expect(after).not.toHaveProperty('readOnly');
    expect(await cluster.ids('pg-0')).toContain(-2);
    expect(cluster.events).toContainEqual(
      expect.objectContaining({ type: 'writes-restored', instance: 'pg-0' }),
    );
  });

  /** A statement as the superuser in a session that may write whatever its role's defaults say. */
  const asWriter = (text: string) =>
    withConnection(cluster.instance('pg-0'), cluster.bed.superuser, defaultConnectOptions, async (client) => {
      await client.query('SET default_transaction_read_only = off');
      await client.query(text);
    });

  it('warns once, and does not say writes are restored, when a role setting keeps it read-only', async () => {
    const role = cluster.bed.superuser.user;
    await asWriter(`ALTER ROLE "${role}" SET default_transaction_read_only = on`);
    try {
      const from = cluster.events.length;
      const engine = cluster.engine();
      expect(await engine.tick()).toBeUndefined();
      const first = cluster.events.slice(from);
      expect(first).not.toContainEqual(expect.objectContaining({ type: 'writes-restored' }));
      expect(first).toContainEqual(
        expect.objectContaining({
          type: 'still-read-only',
          instance: 'pg-0',
          message: expect.stringContaining(`the role ${role}`),
        }),
      );
      expect(first.find((e) => e.type === 'still-read-only')?.message).toContain('pg_db_role_setting');
      // The next probe finds the same: no second warning, still no WritesRestored.
      const again = cluster.events.length;
      expect(await engine.tick()).toBeUndefined();
      expect(cluster.events.slice(again)).not.toContainEqual(
        expect.objectContaining({ type: expect.stringMatching(/^(still-read-only|writes-restored)$/) }),
      );
    } finally {
      await asWriter(`ALTER ROLE "${role}" RESET default_transaction_read_only`);
    }
  });
});
