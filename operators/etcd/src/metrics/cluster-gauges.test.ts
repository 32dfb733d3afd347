// The per-cluster gauges as Prometheus scrapes them: values from a status, the backup age growing
// between scrapes, leader changes counted, a deleted cluster's series gone.
import { Registry } from '@homeostat/reconcile';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdClusterStatusFields } from '../api/etcd-cluster-types.ts';
import { ClusterGauges } from './cluster-gauges.ts';

const cluster = { metadata: { name: 'orders', namespace: 'shop' }, spec: { size: 3 } } as EtcdCluster;
const labels = 'namespace="shop",cluster="orders"';

function status(leader: string, ready: number, quorum: boolean): EtcdClusterStatusFields {
  return {
    leader,
    readyMembers: ready,
    members: [0, 1, 2].map((i) => ({ name: `orders-${i}`, role: 'Voter', ready: i < ready })),
    conditions: [
      {
        type: 'Available',
        status: quorum ? 'True' : 'False',
        reason: quorum ? 'QuorumHealthy' : 'QuorumLost',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  } as EtcdClusterStatusFields;
}

describe('ClusterGauges', () => {
  it('exposes members, quorum and leader changes per cluster, and drops them when the cluster goes', async () => {
    const registry = new Registry();
    const gauges = new ClusterGauges(registry);
    gauges.observe(cluster, status('orders-0', 3, true));
    gauges.observe(cluster, status('orders-0', 3, true));
    gauges.observe(cluster, status('orders-1', 1, false));
    const text = await registry.metrics();
    expect(text).toContain(`etcd_cluster_members_desired{${labels}} 3`);
    expect(text).toContain(`etcd_cluster_members_ready{${labels}} 1`);
    expect(text).toContain(`etcd_cluster_voting_members{${labels}} 3`);
    expect(text).toContain(`etcd_cluster_quorum{${labels}} 0`);
    expect(text).toContain(`etcd_cluster_leader_changes_total{${labels}} 1`);
    gauges.forget({ namespace: 'shop', name: 'orders' });
    expect(await registry.metrics()).not.toContain('cluster="orders"');
  });

  it('gives the age of the newest good backup at scrape time', async () => {
    const registry = new Registry();
    let now = Date.parse('2026-01-01T01:00:00Z');
    const gauges = new ClusterGauges(registry, () => now);
    expect(await registry.metrics()).not.toContain('etcd_cluster_last_backup_age_seconds{');
    gauges.backupSucceeded(cluster, new Date('2026-01-01T00:00:00Z'));
    gauges.backupSucceeded(cluster, new Date('2025-12-31T00:00:00Z')); // older: ignored
    expect(await registry.metrics()).toContain(`etcd_cluster_last_backup_age_seconds{${labels}} 3600`);
    now += 60_000;
    expect(await registry.metrics()).toContain(`etcd_cluster_last_backup_age_seconds{${labels}} 3660`);
  });
});
