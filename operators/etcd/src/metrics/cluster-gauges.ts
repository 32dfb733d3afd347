// The operator's own gauges per EtcdCluster, beside controller-runtime's in the manager's registry:
// what a dashboard shows and an alert fires on (members ready, quorum, leader changes, the age of
// the newest good backup). Labels are the cluster's namespace and name only, so series stay bounded
// by the number of clusters; a deleted cluster's series are dropped.
import { Counter, Gauge, type Registry } from '@homeostat/reconcile';
import type { EtcdCluster, EtcdClusterStatusFields } from '../api/etcd-cluster-types.ts';
import { nameOf, namespaceOf } from '../controllers/cluster-names.ts';

type Labels = { namespace: string; cluster: string };
const labelNames = ['namespace', 'cluster'] as const;

export class ClusterGauges {
  readonly #desired: Gauge;
  readonly #ready: Gauge;
  readonly #voters: Gauge;
  readonly #quorum: Gauge;
  readonly #leaderChanges: Counter;
  readonly #backupAge: Gauge;
  /** When the newest good backup of each cluster finished (key namespace/name). */
  readonly #lastBackup = new Map<string, { labels: Labels; at: number }>();
  readonly #leaders = new Map<string, string>();
  readonly #now: () => number;

  constructor(registry: Registry, now: () => number = Date.now) {
    this.#now = now;
    const registers = [registry];
    this.#desired = new Gauge({
      name: 'etcd_cluster_members_desired',
      help: 'Members the EtcdCluster spec asks for (spec.size)',
      labelNames,
      registers,
    });
    this.#ready = new Gauge({
      name: 'etcd_cluster_members_ready',
      help: 'Members that answer healthy',
      labelNames,
      registers,
    });
    this.#voters = new Gauge({
      name: 'etcd_cluster_voting_members',
      help: 'Voting members (learners excluded) in etcd’s member list',
      labelNames,
      registers,
    });
    this.#quorum = new Gauge({
      name: 'etcd_cluster_quorum',
      help: '1 while a majority of voting members is healthy (writes succeed), 0 otherwise',
      labelNames,
      registers,
    });
    this.#leaderChanges = new Counter({
      name: 'etcd_cluster_leader_changes_total',
      help: 'Leader changes the operator observed (it looks every reconcile, so quick flaps may count once)',
      labelNames,
      registers,
    });
    const lastBackup = this.#lastBackup;
    const clock = this.#now;
    this.#backupAge = new Gauge({
      name: 'etcd_cluster_last_backup_age_seconds',
      help: 'Seconds since the newest backup that was verified and committed finished',
      labelNames,
      registers,
      // Computed at scrape time, so the age grows between reconciles.
      collect: () => {
        for (const { labels, at } of lastBackup.values()) this.#backupAge.set(labels, (clock() - at) / 1000);
      },
    });
  }

  /** Records what one reconcile observed of `cluster`. */
  observe(cluster: EtcdCluster, status: EtcdClusterStatusFields): void {
    const labels = labelsOf(cluster);
    const key = `${labels.namespace}/${labels.cluster}`;
    this.#desired.set(labels, cluster.spec.size);
    this.#ready.set(labels, status.readyMembers ?? 0);
    this.#voters.set(labels, status.members?.filter((m) => m.role === 'Voter').length ?? 0);
    const available = status.conditions?.find((c) => c.type === 'Available');
    this.#quorum.set(labels, available?.status === 'True' ? 1 : 0);
    this.#leaderChanges.inc(labels, 0); // the series exists from the first look
    const previous = this.#leaders.get(key);
    if (status.leader && previous !== undefined && previous !== status.leader)
      this.#leaderChanges.inc(labels);
    if (status.leader) this.#leaders.set(key, status.leader);
  }

  /** Records a backup of `cluster` that was verified and committed, finished at `finishedAt`. */
  backupSucceeded(cluster: EtcdCluster, finishedAt: Date): void {
    const labels = labelsOf(cluster);
    const key = `${labels.namespace}/${labels.cluster}`;
    const known = this.#lastBackup.get(key);
    if (!known || known.at < finishedAt.getTime())
      this.#lastBackup.set(key, { labels, at: finishedAt.getTime() });
  }

  /** Drops every series of a cluster that no longer exists. */
  forget(key: { namespace: string; name: string }): void {
    const labels = { namespace: key.namespace, cluster: key.name };
    for (const metric of [this.#desired, this.#ready, this.#voters, this.#quorum, this.#backupAge]) {
      metric.remove(labels);
    }
    this.#leaderChanges.remove(labels);
    this.#lastBackup.delete(`${key.namespace}/${key.name}`);
    this.#leaders.delete(`${key.namespace}/${key.name}`);
  }
}

function labelsOf(cluster: EtcdCluster): Labels {
  return { namespace: namespaceOf(cluster), cluster: nameOf(cluster) };
}
