// readClusterHealth on real etcd processes, counting the calls a member served from etcd's own
// metrics (grpc_server_started_total on its client port), not from a stand-in for etcd.
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import type { EtcdConnection } from '../connection.ts';
import { must } from '../test-support/must.ts';
import { readClusterHealth } from './cluster-health.ts';

let cluster: EtcdTestCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** How many Alarm calls the member at `clientUrl` has started serving. */
async function alarmCallsServed(clientUrl: string): Promise<number> {
  const metrics = await (await fetch(new URL('/metrics', clientUrl))).text();
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('grpc_server_started_total{') && line.includes('grpc_method="Alarm"'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('cluster health on real etcd processes', () => {
  it('asks for alarms while a majority answers, and not once quorum is lost (the read through raft would only time out)', async () => {
    cluster = await startEtcdCluster({ size: 3 });
    const first = must(cluster.members.get('etcd-0'), 'etcd-0 process');
    const connection: EtcdConnection = { endpoints: [first.clientUrl], callTimeoutMs: 2000 };

    const withQuorum = await alarmCallsServed(first.clientUrl);
    const healthy = await readClusterHealth(connection);
    expect(healthy.hasQuorum).toBe(true);
    expect(healthy.linearizableList).toBe(true);
    expect(await alarmCallsServed(first.clientUrl)).toBeGreaterThan(withQuorum);

    for (const name of ['etcd-1', 'etcd-2']) await must(cluster.members.get(name), name).process.stop(2000);
    await waitUntil(
      'etcd-0 without a leader',
      async () => !(await readClusterHealth(connection)).members.some((m) => m.healthy),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const withoutQuorum = await alarmCallsServed(first.clientUrl);
    const lost = await readClusterHealth(connection);
    expect(lost.hasQuorum).toBe(false);
    expect(lost.linearizableList).toBe(false);
    expect(lost.alarms).toEqual([]);
    expect(await alarmCallsServed(first.clientUrl)).toBe(withoutQuorum);
  });
});
