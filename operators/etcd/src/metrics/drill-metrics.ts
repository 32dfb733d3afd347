// What restore drills measured, per EtcdCluster, beside the cluster gauges: an alert fires on a
// drill that failed (etcd_cluster_backup_verified 0) and a dashboard plots the measured recovery
// time and recovery point. Labels are the cluster's namespace and name (and a drill's result), so
// series stay bounded by the number of clusters.
import { Counter, Gauge, type Registry } from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { nameOf, namespaceOf } from '../controllers/cluster-names.ts';

const labelNames = ['namespace', 'cluster'] as const;

export class DrillMetrics {
  readonly #verified: Gauge;
  readonly #restoreSeconds: Gauge;
  readonly #recoveryPointSeconds: Gauge;
  readonly #drills: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#verified = new Gauge({
      name: 'etcd_cluster_backup_verified',
      help: '1 when the last restore drill proved its backup (HashKV equal), 0 when it failed',
      labelNames,
      registers,
    });
    this.#restoreSeconds = new Gauge({
      name: 'etcd_cluster_backup_drill_restore_seconds',
      help: 'Measured recovery time of the last passed drill: its start until the restored copy answered',
      labelNames,
      registers,
    });
    this.#recoveryPointSeconds = new Gauge({
      name: 'etcd_cluster_backup_drill_recovery_point_seconds',
      help: 'Measured recovery point of the last passed drill: how old the restored backup was at its start',
      labelNames,
      registers,
    });
    this.#drills = new Counter({
      name: 'etcd_cluster_backup_drills_total',
      help: 'Restore drills finished, by result (Verified, or the reason they failed)',
      labelNames: [...labelNames, 'result'],
      registers,
    });
  }

  /** A drill that proved its backup, with what it measured. */
  passed(cluster: EtcdCluster, restoreSeconds: number, recoveryPointSeconds: number): void {
    const labels = { namespace: namespaceOf(cluster), cluster: nameOf(cluster) };
    this.#verified.set(labels, 1);
    this.#restoreSeconds.set(labels, restoreSeconds);
    this.#recoveryPointSeconds.set(labels, recoveryPointSeconds);
    this.#drills.inc({ ...labels, result: 'Verified' });
  }

  /** A drill that failed; `reason` is the BackupVerified condition's (a short fixed word). */
  failed(cluster: EtcdCluster, reason: string): void {
    const labels = { namespace: namespaceOf(cluster), cluster: nameOf(cluster) };
    this.#verified.set(labels, 0);
    this.#drills.inc({ ...labels, result: reason });
  }

  /** Drops every series of a cluster that no longer exists. */
  forget(key: { namespace: string; name: string }): void {
    const labels = { namespace: key.namespace, cluster: key.name };
    for (const metric of [this.#verified, this.#restoreSeconds, this.#recoveryPointSeconds])
      metric.remove(labels);
  }
}
