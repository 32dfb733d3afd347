// The restore drill metrics as Prometheus scrapes them: a passed drill's measurements, a failed
// one turning etcd_cluster_backup_verified to 0 and counted by its reason, a deleted cluster gone.
import { Registry } from '@homeostat/reconcile';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { DrillMetrics } from './drill-metrics.ts';

const cluster = { metadata: { name: 'orders', namespace: 'shop' }, spec: { size: 3 } } as EtcdCluster;
const labels = 'namespace="shop",cluster="orders"';

describe('DrillMetrics', () => {
  it('exposes what the last drill measured and counts drills by result', async () => {
    const registry = new Registry();
    const metrics = new DrillMetrics(registry);
    metrics.passed(cluster, 4.5, 1800);
    let text = await registry.metrics();
    expect(text).toContain(`etcd_cluster_backup_verified{${labels}} 1`);
    expect(text).toContain(`etcd_cluster_backup_drill_restore_seconds{${labels}} 4.5`);
    expect(text).toContain(`etcd_cluster_backup_drill_recovery_point_seconds{${labels}} 1800`);
    metrics.failed(cluster, 'SnapshotMissing');
    text = await registry.metrics();
    expect(text).toContain(`etcd_cluster_backup_verified{${labels}} 0`);
    expect(text).toContain(`etcd_cluster_backup_drills_total{${labels},result="Verified"} 1`);
    expect(text).toContain(`etcd_cluster_backup_drills_total{${labels},result="SnapshotMissing"} 1`);
    metrics.forget({ namespace: 'shop', name: 'orders' });
    expect(await registry.metrics()).not.toContain(`etcd_cluster_backup_verified{${labels}}`);
  });
});
