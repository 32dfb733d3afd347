// The backup schedule's clock in tests: stopped, and moved on to the next cron time (every five
// minutes) by the test rather than waited for.
import { waitUntil } from '@homeostat/testing';
import type { KubeClient } from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../api/etcd-backup-types.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { scheduledName } from '@homeostat/operator-kit/schedule';

export class ScheduleClock {
  #now = new Date();

  /** What the schedule controller takes as its `now`. */
  readonly now = (): Date => this.#now;

  /**
   * Moves to the next five-minute cron time and nudges `cluster` so that the schedule looks at once;
   * returns that run's EtcdBackup once Succeeded.
   */
  async nextRun(
    client: KubeClient,
    namespace: string,
    cluster: string,
    run: number,
    poll: { timeoutMs: number; intervalMs: number },
  ): Promise<EtcdBackup> {
    this.#now = new Date(this.#now.getTime() + 5 * 60_000);
    const due = new Date(this.#now);
    due.setUTCMinutes(due.getUTCMinutes() - (due.getUTCMinutes() % 5), 0, 0);
    const backup = scheduledName(cluster, due);
    await client.patch(etcdClusters, cluster, namespace, {
      metadata: { annotations: { 'test.homeostat.dev/tick': String(run) } },
    });
    await waitUntil(
      `${backup} Succeeded`,
      async () => (await client.find(etcdBackups, backup, namespace))?.status?.phase === 'Succeeded',
      poll,
    );
    return client.get(etcdBackups, backup, namespace);
  }
}
