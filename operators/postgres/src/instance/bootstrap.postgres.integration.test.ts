import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';
import { withConnection, defaultConnectOptions } from './instance.ts';
import { observeInstance } from './observe.ts';
import { clusterView } from '../failover/cluster-view.ts';
import { setSuperuserAccess } from './control.ts';

describe('entrypoint bootstrap on real PostgreSQL 15 processes', () => {
  const bed = new PostgresTestBed('bootstrap');
  let primary: TestInstance;
  let replicas: TestInstance[];

  beforeAll(async () => {
    primary = await bed.start('pg-0', { role: 'primary' });
    replicas = await Promise.all(
      ['pg-1', 'pg-2'].map((name) => bed.start(name, { role: 'replica', primary })),
    );
  });
  afterAll(() => bed.cleanup());

  it('bootstraps one primary and two streaming replicas; a row written on the primary appears on both', async () => {
    await withConnection(primary, bed.superuser, defaultConnectOptions, async (c) => {
      await c.query('CREATE TABLE greeting (id int PRIMARY KEY, text text)');
      await c.query("INSERT INTO greeting VALUES (1, 'hello from pg-0')");
    });
    for (const replica of replicas) {
      await waitUntil(
        `row visible on ${replica.name}`,
        () =>
          withConnection(replica, bed.superuser, defaultConnectOptions, async (c) => {
            const r = await c
              .query<{ text: string }>('SELECT text FROM greeting WHERE id = 1')
              .catch(() => ({ rows: [] }));
            return r.rows[0]?.text === 'hello from pg-0';
          }),
        { timeoutMs: 20_000 },
      );
    }
    const p = await observeInstance(primary, bed.superuser, defaultConnectOptions);
    expect(p).toMatchObject({ reachable: true, role: 'primary', timeline: 1 });
    if (p.reachable && p.role === 'primary') {
      expect(p.standbys.map((s) => [s.applicationName, s.state])).toEqual([
        ['pg-1', 'streaming'],
        ['pg-2', 'streaming'],
      ]);
    }
    await waitUntil(
      'both replicas report zero lag',
      async () => {
        const view = clusterView(
          await Promise.all(
            [primary, ...replicas].map((i) => observeInstance(i, bed.superuser, defaultConnectOptions)),
          ),
        );
        return view.instances.every((i) => i.lagBytes === 0n);
      },
      { timeoutMs: 20_000 },
    );
    const view = clusterView(
      await Promise.all(
        [primary, ...replicas].map((i) => observeInstance(i, bed.superuser, defaultConnectOptions)),
      ),
    );
    expect(view.primaries).toEqual(['pg-0']);
    expect(
      view.instances.map((i) => [i.status.name, i.replication?.state, i.replication?.syncState]),
    ).toEqual([
      ['pg-0', undefined, undefined],
      ['pg-1', 'streaming', 'async'],
      ['pg-2', 'streaming', 'async'],
    ]);
    for (const replica of replicas) {
      const s = await observeInstance(replica, bed.superuser, defaultConnectOptions);
      expect(s).toMatchObject({
        reachable: true,
        role: 'replica',
        walReceiver: { status: 'streaming', senderPort: primary.port },
      });
    }
  });

  it('streams each replica through its own replication slot and keeps the replication password out of primary_conninfo', async () => {
    const slots = await withConnection(primary, bed.superuser, defaultConnectOptions, (c) =>
      c.query<{ slot_name: string; active: boolean }>(
        'SELECT slot_name, active FROM pg_replication_slots ORDER BY 1',
      ),
    );
    expect(slots.rows).toEqual([
      { slot_name: 'homeostat_pg_1', active: true },
      { slot_name: 'homeostat_pg_2', active: true },
    ]);
    const conninfo = await withConnection(replicas[0] ?? primary, bed.superuser, defaultConnectOptions, (c) =>
      c.query<{ primary_conninfo: string }>('SHOW primary_conninfo'),
    );
    expect(conninfo.rows[0]?.primary_conninfo).toContain('passfile=');
    expect(conninfo.rows[0]?.primary_conninfo).not.toMatch(/password/);
  });

  it('creates the replication user without superuser and refuses connections without a password', async () => {
    const role = await withConnection(primary, bed.superuser, defaultConnectOptions, (c) =>
      c.query<{ rolsuper: boolean; rolreplication: boolean }>(
        "SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = 'streaming_replica'",
      ),
    );
    expect(role.rows).toEqual([{ rolsuper: false, rolreplication: true }]);
    await expect(
      withConnection(primary, { user: 'postgres', password: 'wrong' }, defaultConnectOptions, (c) =>
        c.query('SELECT 1'),
      ),
    ).rejects.toThrow(/password authentication failed/);
  });

  it('grants a published superuser login with a password, and takes it away, each once', async () => {
    // The operator publishes `postgres`; here initdb's superuser is `postgres`, so another name.
    const role = 'published_su';
    const target = { endpoint: primary, credentials: bed.superuser, options: defaultConnectOptions };
    const asPostgres = (password: string) =>
      withConnection(
        primary,
        { user: role, password },
        defaultConnectOptions,
        async (c) =>
          (await c.query<{ su: boolean }>("SELECT current_setting('is_superuser') = 'on' AS su")).rows[0]?.su,
      );
    expect(await setSuperuserAccess(target, role, 'first-secret')).toBe(true);
    expect(await setSuperuserAccess(target, role, 'first-secret')).toBe(false);
    expect(await asPostgres('first-secret')).toBe(true);
    expect(await setSuperuserAccess(target, role, undefined)).toBe(true);
    expect(await setSuperuserAccess(target, role, undefined)).toBe(false);
    await expect(asPostgres('first-secret')).rejects.toThrow(/not permitted to log in/);
    // Turned on again with a new Secret: the new password is the one that works.
    expect(await setSuperuserAccess(target, role, 'second-secret')).toBe(true);
    expect(await asPostgres('second-secret')).toBe(true);
    await expect(asPostgres('first-secret')).rejects.toThrow(/password authentication failed/);
  });
});
