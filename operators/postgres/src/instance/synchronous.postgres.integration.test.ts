import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster, missingIds } from '../test-support/test-cluster.ts';
import { loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import type { FailoverEngine } from '../failover/engine.ts';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { observeInstance } from './observe.ts';

/** Waits until the primary's synchronous_standby_names is `expected` and every listed standby votes. */
async function waitForSyncNames(
  cluster: TestCluster,
  primary: string,
  expected: string,
  quorum: string[],
): Promise<void> {
  await waitUntil(
    `${primary} has synchronous_standby_names = ${expected || "''"} with ${quorum.join(', ') || 'no'} quorum standbys`,
    async () => {
      const [names] = await cluster.sql<{ v: string }>(
        primary,
        "SELECT current_setting('synchronous_standby_names') AS v",
      );
      const rows = await cluster.sql<{ n: string }>(
        primary,
        "SELECT application_name AS n FROM pg_stat_replication WHERE sync_state = 'quorum' ORDER BY 1",
      );
      return names?.v === expected && rows.map((r) => r.n).join() === quorum.join();
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** Stops every instance but `primary`, cleanly. */
async function stopStandbys(cluster: TestCluster, primary: string): Promise<string[]> {
  const standbys = cluster.endpoints.map((e) => e.name).filter((n) => n !== primary);
  await Promise.all(standbys.map((n) => cluster.instance(n).stopFast()));
  return standbys;
}

describe('synchronous replication, dataDurability required, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'sync-required' });
  let engine: FailoverEngine;
  beforeAll(async () => {
    await cluster.start();
    engine = cluster.engine({ synchronous: { number: 1, dataDurability: 'required' } });
    engine.start();
  });
  afterAll(async () => {
    await engine?.stop();
    await cluster.cleanup();
  });

  it('sets the list once and then leaves it: no reload on every probe', async () => {
    await waitForSyncNames(cluster, 'pg-0', 'ANY 1 ("pg-1", "pg-2")', ['pg-1', 'pg-2']);
    const sets = () => cluster.events.filter((e) => e.type === 'synchronous-standbys').length;
    const before = sets();
    await sleep(3000); // several probes
    expect(sets()).toBe(before);
    // What the observation reads from the configuration files is what the primary runs.
    const primary = await observeInstance(
      cluster.instance('pg-0'),
      cluster.bed.superuser,
      defaultConnectOptions,
    );
    expect(primary).toMatchObject({
      role: 'primary',
      synchronousStandbyNames: 'ANY 1 ("pg-1", "pg-2")',
      configuredSynchronousStandbyNames: 'ANY 1 ("pg-1", "pg-2")',
    });
  });

  it('loses no acknowledged write across a kill -9 failover', async () => {
    await waitForSyncNames(cluster, 'pg-0', 'ANY 1 ("pg-1", "pg-2")', ['pg-1', 'pg-2']);
    const writer = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 200, { timeoutMs: 30_000 });
      await cluster.instance('pg-0').kill9();
      const killedAt = Date.now();
      await waitUntil(
        'writes on the new primary',
        async () => writer.acked.filter((a) => a.at > killedAt).length > 100,
        {
          timeoutMs: 60_000,
          describe: () => cluster.events.map((e) => `${e.type} ${e.message}`).join('\n'),
        },
      );
    } finally {
      await writer.stop();
    }
    const primary = engine.primary;
    expect(primary).not.toBe('pg-0');
    expect(missingIds(writer.acked, await cluster.ids(primary))).toEqual([]);
    const others = cluster.endpoints
      .map((e) => e.name)
      .filter((n) => n !== primary)
      .sort();
    await waitForSyncNames(cluster, primary, `ANY 1 (${others.map((n) => `"${n}"`).join(', ')})`, others);
  });

  it('blocks commits while its standbys are gone and releases them when one returns', async () => {
    const primary = engine.primary;
    const standbys = await stopStandbys(cluster, primary);
    let settled = false;
    // No statement timeout: cancelling a commit's wait for a standby would return it as done.
    const insert = withConnection(
      cluster.instance(primary),
      cluster.bed.superuser,
      { connectTimeoutMs: 2000, statementTimeoutMs: 300_000 },
      (c) => c.query('INSERT INTO acked (id) VALUES (-1)'),
    ).finally(() => (settled = true));
    await waitUntil(
      'the commit waits for a synchronous standby',
      async () => {
        const rows = await cluster.sql(
          primary,
          "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep'",
        );
        return rows.length === 1;
      },
      { timeoutMs: 20_000 },
    );
    // Give the engine several probes to (wrongly) degrade the setting; required must not.
    await sleep(1500);
    expect(settled).toBe(false);
    const [names] = await cluster.sql<{ v: string }>(
      primary,
      "SELECT current_setting('synchronous_standby_names') AS v",
    );
    expect(names?.v).toMatch(/^ANY 1 \(/);

    await cluster.bed.start(standbys[0] ?? '', { role: 'replica', primary: cluster.instance(primary) });
    await insert;
    expect(await cluster.ids(primary)).toContain(-1);
  });
});

describe('synchronous replication, dataDurability preferred, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'sync-preferred' });
  let engine: FailoverEngine;
  beforeAll(async () => {
    await cluster.start();
    engine = cluster.engine({ synchronous: { number: 1, dataDurability: 'preferred' } });
    engine.start();
  });
  afterAll(async () => {
    await engine?.stop();
    await cluster.cleanup();
  });

  it('keeps writing when its standbys are gone and becomes synchronous again when they return', async () => {
    await waitForSyncNames(cluster, 'pg-0', 'ANY 1 ("pg-1", "pg-2")', ['pg-1', 'pg-2']);
    await stopStandbys(cluster, 'pg-0');
    const writer = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
    try {
      await waitUntil('writes succeed without standbys', async () => writer.acked.length > 50, {
        timeoutMs: 30_000,
      });
    } finally {
      await writer.stop();
    }
    await waitForSyncNames(cluster, 'pg-0', '', []);
    expect(missingIds(writer.acked, await cluster.ids('pg-0'))).toEqual([]);

    await cluster.bed.start('pg-2', { role: 'replica', primary: cluster.instance('pg-0') });
    await waitForSyncNames(cluster, 'pg-0', 'ANY 1 ("pg-2")', ['pg-2']);
    // The engine degraded to asynchronous only while no standby streamed, and came back.
    const changes = cluster.events.filter((e) => e.type === 'synchronous-standbys').map((e) => e.message);
    expect(changes).toContain(`synchronous_standby_names = ''`);
    expect(changes.at(-1)).toBe(`synchronous_standby_names = 'ANY 1 ("pg-2")'`);
  });
});

describe("a primary's synchronous list as its files say and as it runs, on real PostgreSQL 15 processes", () => {
  const cluster = new TestCluster({ size: 1, label: 'sync-files' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('reads what ALTER SYSTEM wrote before the reload runs it (pg_file_settings)', async () => {
    const observe = () =>
      observeInstance(cluster.instance('pg-0'), cluster.bed.superuser, defaultConnectOptions);
    await cluster.sql('pg-0', `ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 ("pg-1", "pg-2")'`);
    expect(await observe()).toMatchObject({
      synchronousStandbyNames: '',
      configuredSynchronousStandbyNames: 'ANY 1 ("pg-1", "pg-2")',
    });
    await cluster.sql('pg-0', `ALTER SYSTEM RESET synchronous_standby_names`);
    expect(await observe()).toMatchObject({
      synchronousStandbyNames: '',
      configuredSynchronousStandbyNames: '',
    });
  });
});
