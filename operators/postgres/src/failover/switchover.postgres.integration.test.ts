import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster, missingIds } from '../test-support/test-cluster.ts';
import { loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import { observeInstance } from '../instance/observe.ts';
import { defaultConnectOptions } from '../instance/instance.ts';

describe('planned switchover on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'switchover' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  /** The primary still takes writes and nothing else does: what every refusal must leave behind. */
  async function expectUntouched(): Promise<void> {
    const statuses = await Promise.all(
      cluster.endpoints.map((e) => observeInstance(e, cluster.bed.superuser, defaultConnectOptions)),
    );
    const writers = statuses.filter((s) => s.reachable && s.role === 'primary').map((s) => s.name);
    expect(writers).toEqual(['pg-0']);
    expect(cluster.router.upstream).toBe('pg-0');
    await cluster.sql('pg-0', 'INSERT INTO acked (id) VALUES ((SELECT coalesce(min(id), 0) - 1 FROM acked))');
  }

  it('refuses unsafe switchovers with a readable reason and changes nothing', async () => {
    const engine = cluster.engine({ maxLagBytes: 64n * 1024n });
    expect(await engine.switchover('pg-9')).toMatchObject({
      outcome: 'refused',
      code: 'unknown-instance',
      reason: "'pg-9' is not an instance of this cluster",
    });
    expect(await engine.switchover('pg-0')).toMatchObject({
      code: 'already-primary',
      reason: 'pg-0 is already the primary',
    });

    // A replica that applies nothing any more: too far behind to take over.
    await cluster.sql('pg-2', "ALTER SYSTEM SET recovery_min_apply_delay = '1h'");
    await cluster.sql('pg-2', 'SELECT pg_reload_conf()');
    await cluster.sql('pg-0', 'INSERT INTO acked (id) VALUES (-1000000)');
    await cluster.sql(
      'pg-0',
      "INSERT INTO acked (id, pad) SELECT -g, repeat('x', 200) FROM generate_series(1000001, 1003000) g",
    );
    const lagging = await engine.switchover('pg-2');
    expect(lagging).toMatchObject({ outcome: 'refused', code: 'target-lagging' });
    expect(lagging.outcome === 'refused' && lagging.reason).toMatch(
      /^pg-2 has replayed \S+, \d+ bytes behind pg-0 at \S+ \(bound 65536 bytes\)$/,
    );
    await expectUntouched();
    await cluster.sql('pg-2', 'ALTER SYSTEM RESET recovery_min_apply_delay');
    await cluster.sql('pg-2', 'SELECT pg_reload_conf()');

    // A replica that is down.
    await cluster.instance('pg-2').stopFast();
    const down = await engine.switchover('pg-2');
    expect(down).toMatchObject({ outcome: 'refused', code: 'target-unreachable' });
    expect(down.outcome === 'refused' && down.reason).toMatch(/^pg-2 is unreachable \(.*ECONNREFUSED.*\)$/);
    await expectUntouched();
    await cluster.bed.start('pg-2', { role: 'replica', primary: cluster.instance('pg-0') });
    await cluster.waitCaughtUp('pg-2', 'pg-0');
  });

  it('switches over under write load without losing an acknowledged write; the old primary rejoins', async () => {
    const engine = cluster.engine();
    const writer = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
    let outcome;
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 200, { timeoutMs: 30_000 });
      outcome = await engine.switchover('pg-1');
      const doneAt = Date.now();
      await waitUntil('writes on pg-1', async () => writer.acked.filter((a) => a.at > doneAt).length > 100, {
        timeoutMs: 30_000,
      });
    } finally {
      await writer.stop();
    }
    expect(outcome).toMatchObject({
      outcome: 'promoted',
      kind: 'switchover',
      oldPrimary: 'pg-0',
      newPrimary: 'pg-1',
      rejoin: 'requested',
    });
    expect(cluster.router.upstream).toBe('pg-1');
    expect(cluster.fenced).toEqual(['pg-0']);

    expect(missingIds(writer.acked, await cluster.ids('pg-1'))).toEqual([]);
    for (const name of ['pg-0', 'pg-2']) await cluster.waitCaughtUp(name, 'pg-1');
    expect(cluster.bed.entrypointLog('pg-0')).toContainEqual(
      expect.stringContaining('rejoin: method=pg_rewind'),
    );
    const expected = await cluster.ids('pg-1');
    for (const name of ['pg-0', 'pg-2']) expect(await cluster.ids(name)).toEqual(expected);
    // The demoted primary is a plain replica again: not left read-only for a future promotion.
    const [setting] = await cluster.sql<{ value: string }>(
      'pg-0',
      "SELECT current_setting('default_transaction_read_only') AS value",
    );
    expect(setting?.value).toBe('off');
  });
});
