// Per-cluster Prometheus metrics, what a dashboard and an alert on a PostgreSQLCluster need:
// instances and ready instances, each replica's lag in bytes, failovers and switchovers (the
// counts in the status, so they survive an operator restart), and how long the primary has been
// failing. Labels are bounded by the clusters and instances that exist; a deleted cluster's series go.
import { Gauge, type Registry } from '@homeostat/reconcile';
import type { PostgresClusterStatusFields } from '../api/postgres-cluster-types.ts';
import type { PrimaryArchiving } from './archiving-status.ts';

export class ClusterMetrics {
  readonly #instances: Gauge;
  readonly #ready: Gauge;
  readonly #lag: Gauge;
  readonly #failovers: Gauge;
  readonly #switchovers: Gauge;
  readonly #unreachable: Gauge;
  readonly #archiveAge: Gauge;
  readonly #archiveFailing: Gauge;
  /** The replicas with a lag series, per cluster key, so a replica that goes loses its series. */
  readonly #lagInstances = new Map<string, Set<string>>();

  constructor(registry: Registry) {
    const gauge = (name: string, help: string, labelNames: string[] = ['namespace', 'cluster']) =>
      new Gauge({ name, help, labelNames, registers: [registry] });
    this.#instances = gauge('homeostat_postgres_instances', 'Instance pods of the cluster');
    this.#ready = gauge(
      'homeostat_postgres_instances_ready',
      'Instances ready in their role (the primary taking writes, replicas streaming)',
    );
    this.#lag = gauge(
      'homeostat_postgres_replication_lag_bytes',
      'WAL bytes the primary has that this replica has not replayed',
      ['namespace', 'cluster', 'instance'],
    );
    this.#failovers = gauge(
      'homeostat_postgres_failovers_total',
      'Failovers completed (the count in the status: it survives operator restarts)',
    );
    this.#switchovers = gauge(
      'homeostat_postgres_switchovers_total',
      'Switchovers completed (the count in the status: it survives operator restarts)',
    );
    this.#unreachable = gauge(
      'homeostat_postgres_primary_unreachable_seconds',
      'Seconds the primary has been unreachable or not taking writes; 0 while it takes writes',
    );
    this.#archiveAge = gauge(
      'homeostat_postgres_wal_archive_age_seconds',
      "Seconds since the primary last archived a WAL segment (spec.backup); no series until it has archived one since it became primary. Past the cluster's archiveTimeout (plus the time of an upload), archiving is stuck or the primary is idle without archive_timeout",
    );
    this.#archiveFailing = gauge(
      'homeostat_postgres_wal_archive_failing',
      '1 while the primary fails to archive a WAL segment (spec.backup), 0 while it archives',
    );
  }

  /** Records the primary's archiver as the probe saw it; nothing changes when the primary was not seen. */
  recordArchiving(namespace: string, cluster: string, seen: PrimaryArchiving, now = Date.now()): void {
    const labels = { namespace, cluster };
    if (!seen) return;
    const archiver = seen.archiver;
    if (!archiver) {
      this.#archiveAge.remove(labels);
      this.#archiveFailing.remove(labels);
      return;
    }
    if (archiver.lastArchivedAt) {
      this.#archiveAge.set(labels, Math.max(0, (now - archiver.lastArchivedAt.getTime()) / 1000));
    } else {
      this.#archiveAge.remove(labels);
    }
    const failing =
      archiver.lastFailedAt !== undefined &&
      (archiver.lastArchivedAt === undefined || archiver.lastFailedAt > archiver.lastArchivedAt);
    this.#archiveFailing.set(labels, failing ? 1 : 0);
  }

  /** Records what the status says of cluster `namespace/cluster`; `failingSince` from the engine's state. */
  record(
    namespace: string,
    cluster: string,
    status: PostgresClusterStatusFields,
    failingSince: number | undefined,
    now = Date.now(),
  ): void {
    const labels = { namespace, cluster };
    this.#instances.set(labels, status.instances ?? 0);
    this.#ready.set(labels, status.readyInstances ?? 0);
    this.#failovers.set(labels, status.failovers ?? 0);
    this.#switchovers.set(labels, status.switchovers ?? 0);
    this.#unreachable.set(labels, failingSince === undefined ? 0 : Math.max(0, (now - failingSince) / 1000));
    const key = `${namespace}/${cluster}`;
    const before = this.#lagInstances.get(key) ?? new Set<string>();
    const current = new Set<string>();
    for (const instance of status.instanceStatuses ?? []) {
      if (instance.role !== 'replica' || instance.lagBytes === undefined) continue;
      this.#lag.set({ ...labels, instance: instance.name }, instance.lagBytes);
      current.add(instance.name);
    }
    for (const gone of before) if (!current.has(gone)) this.#lag.remove({ ...labels, instance: gone });
    this.#lagInstances.set(key, current);
  }

  /** Drops every series of a deleted cluster. */
  forget(namespace: string, cluster: string): void {
    const labels = { namespace, cluster };
    for (const gauge of [
      this.#instances,
      this.#ready,
      this.#failovers,
      this.#switchovers,
      this.#unreachable,
      this.#archiveAge,
      this.#archiveFailing,
    ])
      gauge.remove(labels);
    const key = `${namespace}/${cluster}`;
    for (const instance of this.#lagInstances.get(key) ?? []) this.#lag.remove({ ...labels, instance });
    this.#lagInstances.delete(key);
  }
}
