import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster } from '../test-support/test-cluster.ts';
import { closeDeadEnds, pauseWalReceiver } from '../test-support/replication-faults.ts';
import { observeInstance, type ReplicaStatus } from '../instance/observe.ts';
import { defaultConnectOptions } from '../instance/instance.ts';

const maxLagBytes = 64n * 1024n;
afterAll(closeDeadEnds);

const observeReplica = async (cluster: TestCluster, name: string): Promise<ReplicaStatus> => {
  const s = await observeInstance(cluster.instance(name), cluster.bed.superuser, defaultConnectOptions);
  if (!s.reachable || s.role !== 'replica') throw new Error(`${name} is not an answering replica`);
  return s;
};

describe('failover under dataDurability required, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'required-candidate' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('promotes the standby that received every acknowledged commit, however slowly it replays', async () => {
    const engine = cluster.engine({ maxLagBytes, synchronous: { number: 1, dataDurability: 'required' } });
    await engine.tick(); // records ANY 1 ("pg-1", "pg-2") as a list commits will count on
    await engine.tick(); // then sets synchronous_standby_names to it
    await waitUntil(
      'pg-0 waits for ANY 1 of pg-1, pg-2',
      async () => {
        const rows = await cluster.sql(
          'pg-0',
          "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'quorum'",
        );
        return rows.length === 2;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );

    // pg-1 receives (and acknowledges) everything but replays nothing more, as under a long query.
    await cluster.sql('pg-1', 'SELECT pg_wal_replay_pause()');
    await cluster.sql(
      'pg-0',
      "INSERT INTO acked (id, pad) SELECT g, repeat('x', 200) FROM generate_series(1, 3000) g",
    );
    await cluster.waitCaughtUp('pg-2', 'pg-0');
    // pg-2 stops receiving; the next commits are acknowledged by pg-1 alone.
    await pauseWalReceiver(cluster, 'pg-2');
    for (let id = 3001; id <= 3010; id++)
      await cluster.sql('pg-0', 'INSERT INTO acked (id) VALUES ($1)', [id]);

    const [pg1, pg2] = [await observeReplica(cluster, 'pg-1'), await observeReplica(cluster, 'pg-2')];
    expect(pg1.receivedLsn).toBeGreaterThan(pg2.receivedLsn ?? 0n); // pg-1 holds the acknowledged tail
    expect(pg1.replayLsn).toBeLessThan(pg2.replayLsn ?? 0n); // but has replayed less than pg-2

    await cluster.instance('pg-0').kill9();
    const outcome = await engine.failover('test: pg-0 killed');
    // Every acknowledged commit is on the new primary: promotion replayed what pg-1 had received.
    expect(await cluster.ids(engine.primary)).toHaveLength(3010);
    expect(outcome).toMatchObject({ outcome: 'promoted', oldPrimary: 'pg-0', newPrimary: 'pg-1' });
    if (outcome.outcome !== 'promoted') return;
    expect(outcome.verdicts.find((v) => v.name === 'pg-2')).toMatchObject({
      eligible: false,
      reason: expect.stringMatching(
        /^holds [0-9A-F]+\/[0-9A-F]+, less than [0-9A-F]+\/[0-9A-F]+ received by another standby/,
      ),
    });
  });
});
