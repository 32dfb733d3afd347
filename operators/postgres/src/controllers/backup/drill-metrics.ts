// The restore drills' metrics, per cluster: when a backup was last proven, how long its restore
// took (the measured RTO), and whether the last drill failed.
import { Gauge, type Manager } from '@homeostat/reconcile';

export class DrillMetrics {
  readonly #verifiedAt: Gauge;
  readonly #restoreSeconds: Gauge;
  readonly #failing: Gauge;
  constructor(manager: Manager) {
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['namespace', 'cluster'], registers: [manager.metrics.registry] });
    this.#verifiedAt = gauge(
      'homeostat_postgres_backup_verified_timestamp_seconds',
      'When a restore drill last restored and checked a backup of the cluster (Unix seconds): alert when it grows old',
    );
    this.#restoreSeconds = gauge(
      'homeostat_postgres_restore_drill_duration_seconds',
      "The last successful drill's restore and replay time: a restore's recovery time (RTO), measured",
    );
    this.#failing = gauge(
      'homeostat_postgres_restore_drill_failing',
      '1 when the last restore drill failed, else 0',
    );
  }
  passed(namespace: string, cluster: string, at: Date, seconds: number): void {
    this.#verifiedAt.set({ namespace, cluster }, at.getTime() / 1000);
    this.#restoreSeconds.set({ namespace, cluster }, seconds);
    this.#failing.set({ namespace, cluster }, 0);
  }
  failed(namespace: string, cluster: string): void {
    this.#failing.set({ namespace, cluster }, 1);
  }
  forget(namespace: string, cluster: string): void {
    for (const g of [this.#verifiedAt, this.#restoreSeconds, this.#failing]) g.remove({ namespace, cluster });
  }
}
