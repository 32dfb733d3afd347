import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster } from '../test-support/test-cluster.ts';
import { closeDeadEnds, pauseWalReceiver } from '../test-support/replication-faults.ts';
import { observeInstance, type ReplicaStatus } from '../instance/observe.ts';
import { defaultConnectOptions } from '../instance/instance.ts';

const maxLagBytes = 64n * 1024n;
afterAll(closeDeadEnds);

/** Delays replay of commits on a standby by an hour: it keeps receiving but stops applying. */
async function delayApply(cluster: TestCluster, name: string): Promise<void> {
  await cluster.sql(name, "ALTER SYSTEM SET recovery_min_apply_delay = '1h'");
  await cluster.sql(name, 'SELECT pg_reload_conf()');
}

/** One small commit (where a delayed standby stops applying), then ~750 kB of WAL after it. */
async function writeWal(cluster: TestCluster, primary: string, from: number): Promise<void> {
  await cluster.sql(primary, 'INSERT INTO acked (id) VALUES ($1)', [from]);
  await cluster.sql(
    primary,
    "INSERT INTO acked (id, pad) SELECT g, repeat('x', 200) FROM generate_series($1::bigint, $2::bigint) g",
    [from + 1, from + 3000],
  );
}

describe('choice of the new primary among lagging replicas, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 4, label: 'lagging' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('never promotes a replica whose WAL receiver is paused or whose apply is delayed; promotes the caught-up one', async () => {
    await pauseWalReceiver(cluster, 'pg-1');
    await delayApply(cluster, 'pg-2');
    await writeWal(cluster, 'pg-0', 1);
    await cluster.waitCaughtUp('pg-3', 'pg-0');
    const before = await Promise.all(
      ['pg-1', 'pg-2', 'pg-3'].map((n) =>
        observeInstance(cluster.instance(n), cluster.bed.superuser, defaultConnectOptions),
      ),
    );
    const [pg1, pg2, pg3] = before as ReplicaStatus[];
    expect(pg1?.receivedLsn).toBeLessThan(pg3?.receivedLsn ?? 0n); // pg-1 stopped receiving
    expect(pg2?.replayLsn).toBeLessThan(pg3?.replayLsn ?? 0n); // pg-2 received but did not apply

    // No engine.tick() first: a tick with a healthy primary re-points stray replicas, and would
    // point the paused pg-1 back at pg-0, where it catches up before the kill (it did, on a loaded
    // machine). The engine needs no tick to judge lag: pg-3's received LSN is the reference.
    const engine = cluster.engine({ maxLagBytes });
    cluster.corruptBeforeRejoin.add('pg-0'); // and the old primary must come back by re-clone
    await cluster.instance('pg-0').kill9();
    const outcome = await engine.failover('test: pg-0 killed');
    expect(outcome).toMatchObject({
      outcome: 'promoted',
      kind: 'failover',
      oldPrimary: 'pg-0',
      newPrimary: 'pg-3',
    });
    if (outcome.outcome !== 'promoted') return;
    const verdict = (name: string) => outcome.verdicts.find((v) => v.name === name);
    expect(verdict('pg-1')).toMatchObject({
      eligible: false,
      reason: expect.stringMatching(/bytes behind .* \(bound 65536 bytes\)/),
    });
    expect(verdict('pg-2')).toMatchObject({ eligible: false, reason: expect.stringMatching(/bytes behind/) });
    expect(verdict('pg-3')).toMatchObject({ eligible: true });

    // The paused replica was re-pointed to pg-3 and catches up; the delayed one once its delay is lifted.
    await cluster.sql('pg-2', 'ALTER SYSTEM RESET recovery_min_apply_delay');
    await cluster.sql('pg-2', 'SELECT pg_reload_conf()');
    for (const name of ['pg-1', 'pg-2']) await cluster.waitCaughtUp(name, 'pg-3');
  });

  it('re-clones an old primary whose data directory pg_rewind cannot use', async () => {
    expect(cluster.bed.entrypointLog('pg-0')).toContainEqual(
      expect.stringContaining('pg_rewind failed; falling back to a fresh clone'),
    );
    expect(cluster.bed.entrypointLog('pg-0')).toContainEqual(expect.stringContaining('rejoin: method=clone'));
    await cluster.waitCaughtUp('pg-0', 'pg-3');
    const expected = await cluster.ids('pg-3');
    expect(expected).toHaveLength(3001);
    for (const name of ['pg-0', 'pg-1', 'pg-2']) expect(await cluster.ids(name)).toEqual(expected);
  });
});

describe('failover with no eligible replica, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 2, label: 'no-eligible' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('refuses with a readable reason, promotes nothing, and fails over once the replica has caught up', async () => {
    await delayApply(cluster, 'pg-1');
    await writeWal(cluster, 'pg-0', 1);
    // Replication is asynchronous here: every commit must have reached pg-1 before the kill, or
    // the rows it never received cannot come back (CI once killed pg-0 first).
    await waitUntil(
      'pg-1 received everything pg-0 wrote',
      async () => {
        const [primary, standby] = await Promise.all(
          ['pg-0', 'pg-1'].map((n) =>
            observeInstance(cluster.instance(n), cluster.bed.superuser, defaultConnectOptions),
          ),
        );
        return (
          primary?.reachable === true &&
          primary.role === 'primary' &&
          standby?.reachable === true &&
          standby.role === 'replica' &&
          (standby.receivedLsn ?? 0n) >= primary.currentLsn
        );
      },
      { timeoutMs: 30_000 },
    );
    const engine = cluster.engine({ maxLagBytes });
    await engine.tick();
    await cluster.instance('pg-0').kill9();

    const refused = await engine.failover('test: pg-0 killed');
    expect(refused).toMatchObject({ outcome: 'refused', code: 'no-eligible-replica' });
    if (refused.outcome !== 'refused') return;
    expect(refused.reason).toMatch(
      /^no eligible replica: pg-1 replayed [0-9A-F]+\/[0-9A-F]+, \d+ bytes behind [0-9A-F]+\/[0-9A-F]+ \(bound 65536 bytes\); pg-0 \(the old primary: nothing was promoted, so its data is the newest\) is brought back at \S+Z unless a replica becomes eligible first$/,
    );
    const still = await observeInstance(
      cluster.instance('pg-1'),
      cluster.bed.superuser,
      defaultConnectOptions,
    );
    expect(still).toMatchObject({ reachable: true, role: 'replica' });
    expect(engine.primary).toBe('pg-0');
    expect(cluster.router.upstream).toBeUndefined(); // writes stay withdrawn: nowhere safe to send them

    await cluster.sql('pg-1', 'ALTER SYSTEM RESET recovery_min_apply_delay');
    await cluster.sql('pg-1', 'SELECT pg_reload_conf()');
    // Every commit it received is replayed once all 3001 rows are visible on it. (Its replay can
    // stay short of its received position for good: the WAL it received may end with part of a
    // record, such as a full-page image the killed primary was writing.)
    await waitUntil(
      'pg-1 replays the commits it received',
      async () => (await cluster.ids('pg-1')).length === 3001,
      { timeoutMs: 30_000 },
    );
    const promoted = await engine.failover('test: retry');
    expect(promoted).toMatchObject({ outcome: 'promoted', newPrimary: 'pg-1' });
    expect(await cluster.ids('pg-1')).toHaveLength(3001);
  });
});
