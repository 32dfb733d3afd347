// The per-cluster metrics as Prometheus reads them: values from the status, lag per replica, and
// series gone with a replica or a deleted cluster.
import { Registry } from '@homeostat/reconcile';
import { describe, expect, it } from 'vitest';
import { ClusterMetrics } from './cluster-metrics.ts';

const lines = async (registry: Registry) =>
  (await registry.metrics()).split('\n').filter((l) => l.startsWith('homeostat_postgres_'));

describe('ClusterMetrics', () => {
  it('exposes instances, readiness, lag per replica, counts and unreachable seconds', async () => {
    const registry = new Registry();
    const metrics = new ClusterMetrics(registry);
    metrics.record(
      'shop',
      'orders',
      {
        instances: 3,
        readyInstances: 2,
        failovers: 2,
        switchovers: 1,
        instanceStatuses: [
          { name: 'orders-0', role: 'primary', ready: true },
          { name: 'orders-1', role: 'replica', ready: true, lagBytes: 0 },
          { name: 'orders-2', role: 'replica', ready: false, lagBytes: 8192 },
        ],
      },
      10_000,
      12_500,
    );
    const l = 'namespace="shop",cluster="orders"';
    expect(await lines(registry)).toEqual(
      expect.arrayContaining([
        `homeostat_postgres_instances{${l}} 3`,
        `homeostat_postgres_instances_ready{${l}} 2`,
        `homeostat_postgres_replication_lag_bytes{${l},instance="orders-1"} 0`,
        `homeostat_postgres_replication_lag_bytes{${l},instance="orders-2"} 8192`,
        `homeostat_postgres_failovers_total{${l}} 2`,
        `homeostat_postgres_switchovers_total{${l}} 1`,
        `homeostat_postgres_primary_unreachable_seconds{${l}} 2.5`,
      ]),
    );
    expect((await lines(registry)).some((x) => x.includes('instance="orders-0"'))).toBe(false);
  });

  it('drops the series of a replica that went and of a deleted cluster', async () => {
    const registry = new Registry();
    const metrics = new ClusterMetrics(registry);
    const replicas = (names: string[]) =>
      names.map((name) => ({ name, role: 'replica' as const, ready: true, lagBytes: 1 }));
    metrics.record('shop', 'orders', { instanceStatuses: replicas(['orders-1', 'orders-2']) }, undefined);
    metrics.record('shop', 'orders', { instanceStatuses: replicas(['orders-1']) }, undefined);
    expect((await lines(registry)).filter((x) => x.includes('orders-2'))).toEqual([]);
    expect(await lines(registry)).toContain(
      'homeostat_postgres_primary_unreachable_seconds{namespace="shop",cluster="orders"} 0',
    );
    metrics.forget('shop', 'orders');
    expect(await lines(registry)).toEqual([]);
  });

  it('exposes the age of the last archived WAL and whether archiving fails, gone with archiving', async () => {
    const registry = new Registry();
    const metrics = new ClusterMetrics(registry);
    const archiver = {
      archivedCount: 2,
      lastArchivedWal: '000000010000000000000002',
      lastArchivedAt: new Date(10_000),
      failedCount: 1,
      lastFailedWal: '000000010000000000000003',
      lastFailedAt: new Date(11_000),
    };
    metrics.recordArchiving('shop', 'orders', { primary: 'orders-0', archiver }, 40_000);
    expect(await lines(registry)).toEqual([
      'homeostat_postgres_wal_archive_age_seconds{namespace="shop",cluster="orders"} 30',
      'homeostat_postgres_wal_archive_failing{namespace="shop",cluster="orders"} 1',
    ]);
    // The primary not seen this turn: the series stay as they were.
    metrics.recordArchiving('shop', 'orders', undefined, 50_000);
    expect(await lines(registry)).toContain(
      'homeostat_postgres_wal_archive_age_seconds{namespace="shop",cluster="orders"} 30',
    );
    metrics.recordArchiving('shop', 'orders', { primary: 'orders-0', archiver: undefined });
    expect(await lines(registry)).toEqual([]);
  });
});
