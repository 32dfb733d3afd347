// The primary a cluster created again on retained claims promotes keeps the cluster's synchronous
// replication from its first commit: under `required`, a write is not acknowledged before a
// standby has it, even while the other instances are still restarting as its replicas. Real
// PostgreSQL 15 processes: pg-0's data kept aside (stopped, as a pod not back yet), pg-1 a standby
// of it with every row, the adoption run against them.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStateStore, settledState } from '../failover/failover-state.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import type { EngineWorld } from '../failover/perform.ts';
import { TestCluster } from '../test-support/test-cluster.ts';
import { adoptRetained } from './adopt-retained.ts';

describe('a retained standby adopted as the primary, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 2, label: 'adopt' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it('under required, its first write waits for a standby instead of being acknowledged alone', async () => {
    await cluster.sql('pg-0', 'INSERT INTO acked (id) VALUES (1)');
    await cluster.waitCaughtUp('pg-1', 'pg-0');
    // The earlier cluster is gone: nothing runs on pg-0's claim yet; pg-1 came back as a standby.
    await cluster.instance('pg-0').kill9();
    const world: EngineWorld = {
      instances: cluster.endpoints,
      credentials: cluster.bed.superuser,
      connect: defaultConnectOptions,
      fencing: cluster.fencing,
      routing: cluster.router,
      // pg-0's pod restarts later (the test leaves it down): the window the promise is about.
      actions: {
        stopCleanly: async () => undefined,
        rejoinAsReplica: async () => undefined,
      },
      emit: (event) => cluster.events.push(event),
    };
    const store = memoryStateStore(settledState('pg-0'));

    // The first turn only looks (the positions must hold still 200 ms) and returns at once; a
    // later turn promotes. Before, one turn slept inside the reconcile and promoted.
    const synchronous = { number: 1, dataDurability: 'required' } as const;
    const first = await adoptRetained(world, store, ['pg-1'], synchronous, { settleMs: 200 });
    expect(first.state).toBeUndefined();
    expect(first.waiting).toMatch(/must hold still for 200 ms/);
    expect(store.state).toEqual(settledState('pg-0'));
    await sleep(250);
    const turn = await adoptRetained(world, store, ['pg-1'], synchronous, {
      settleMs: 200,
      ...(first.seen ? { previous: first.seen } : {}),
    });
    expect(turn.state).toEqual(settledState('pg-1'));
    expect(store.state).toEqual(settledState('pg-1'));

    // A write on the new primary, with no standby yet: it must still be waiting after 3 s (before
    // the fix it came back acknowledged at once: no synchronous standby names). A server-side
    // timeout would not do: a cancelled wait for a standby returns the commit as done.
    const write = withConnection(
      cluster.instance('pg-1'),
      cluster.bed.superuser,
      defaultConnectOptions,
      (c) => c.query('INSERT INTO acked (id) VALUES (2)'),
    ).then(
      () => 'acknowledged',
      () => 'failed',
    );
    const outcome = await Promise.race([
      write,
      new Promise<string>((resolve) => setTimeout(() => resolve('waiting for a standby'), 3000)),
    ]);
    expect(outcome).toBe('waiting for a standby');
    expect(
      await cluster.sql<{ names: string }>(
        'pg-1',
        "SELECT current_setting('synchronous_standby_names') AS names",
      ),
    ).toEqual([{ names: 'ANY 1 ("pg-0")' }]);
  });
});
