import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import { openClient, type EtcdConnection } from '../connection.ts';
import { messageOf } from '../errors.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { compareHashKV } from '../health/hash-kv.ts';
import { defragmentMembers } from './defragment.ts';
import { recoverFromNoSpace } from './nospace-recovery.ts';

const quotaBytes = 2 * 1024 * 1024;
let cluster: EtcdTestCluster;
let connection: EtcdConnection;

beforeAll(async () => {
  cluster = await startEtcdCluster({ size: 3, extraFlags: [`--quota-backend-bytes=${quotaBytes}`] });
  connection = { endpoints: cluster.clientUrls() };
});
afterAll(async () => cluster.stop());

/** Overwrites a few keys with large values until etcd refuses a write with NOSPACE. */
async function fillUntilNoSpace(): Promise<string> {
  const client = openClient(connection);
  const value = 'x'.repeat(64 * 1024);
  try {
    for (let i = 0; i < 1000; i++) {
      try {
        await client.put(`fill/${i % 4}`).value(value);
      } catch (error) {
        return messageOf(error);
      }
    }
    throw new Error('etcd never raised NOSPACE');
  } finally {
    client.close();
  }
}

describe('maintenance on real etcd processes', () => {
  it('brings a cluster with a tiny quota back to writable after NOSPACE (compact, defragment, disarm)', async () => {
    expect(await fillUntilNoSpace()).toMatch(/database space exceeded/);
    const alarmed = await readClusterHealth(connection);
    expect(alarmed.alarms.map((a) => a.alarm)).toContain('NOSPACE');
    expect(alarmed.state).toBe('Degraded');
    expect(alarmed.members.some((m) => m.alarms.includes('NOSPACE'))).toBe(true);

    const recovery = await recoverFromNoSpace(connection);
    expect(recovery.recovered).toBe(true);
    expect(recovery.defragmented).toHaveLength(3);
    for (const d of recovery.defragmented) expect(d.dbSizeAfter).toBeLessThan(quotaBytes);

    const after = await readClusterHealth(connection);
    expect(after.alarms).toEqual([]);
    expect(after.state).toBe('Healthy');
    const client = openClient(connection);
    try {
      await client.put('after/recovery').value('writable again');
      expect(await client.get('after/recovery').string()).toBe('writable again');
    } finally {
      client.close();
    }
    expect((await compareHashKV(connection, cluster.clientUrls())).consistent).toBe(true);
    // Nothing to do the second time: recovery is idempotent.
    expect((await recoverFromNoSpace(connection)).recovered).toBe(false);
  });

  it('defragments members one at a time, the leader last', async () => {
    const health = await readClusterHealth(connection);
    const results = await defragmentMembers(connection);
    expect(results.map((r) => r.member)).toHaveLength(3);
    expect(results.at(-1)?.member).toBe(health.leader?.member.name);
    expect((await readClusterHealth(connection)).state).toBe('Healthy');
  });
});
