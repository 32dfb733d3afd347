// The backup schedule's clock in tests: stopped, and moved on to the next cron time (every five
// minutes) by the test rather than waited for. The time moves for a copy of the cluster that carries
// the test's tick, not before: a reconcile still holding the copy from before the test's last patch
// (a destination moved just before the tick) sees the old time and takes no run with the old spec.
import { waitUntil } from '@homeostat/testing';
import type { KubeClient } from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { scheduledName } from '@homeostat/operator-kit/schedule';

const tickAnnotation = 'test.homeostat.dev/tick';

export class ScheduleClock {
  readonly #start = new Date();

  /** What the schedule controller takes as its `now`: five minutes past the start per tick seen. */
  readonly now = (cluster: EtcdCluster): Date => {
    const tick = Number(cluster.metadata?.annotations?.[tickAnnotation] ?? 0) || 0;
    return new Date(this.#start.getTime() + tick * 5 * 60_000);
  };

  /**
   * Ticks `cluster` to run number `run` (the next five-minute cron time, so that the schedule looks
   * at once); returns that run's EtcdBackup once Succeeded.
   */
  async nextRun(
    client: KubeClient,
    namespace: string,
    cluster: string,
    run: number,
    poll: { timeoutMs: number; intervalMs: number },
  ): Promise<EtcdBackup> {
    const due = new Date(this.#start.getTime() + run * 5 * 60_000);
    due.setUTCMinutes(due.getUTCMinutes() - (due.getUTCMinutes() % 5), 0, 0);
    const backup = scheduledName(cluster, due);
    await client.patch(etcdClusters, cluster, namespace, {
      metadata: { annotations: { [tickAnnotation]: String(run) } },
    });
    await waitUntil(
      `${backup} Succeeded`,
      async () => (await client.find(etcdBackups, backup, namespace))?.status?.phase === 'Succeeded',
      poll,
    );
    return client.get(etcdBackups, backup, namespace);
  }
}
