// The etcd operator's Grafana dashboard: per EtcdCluster, what the on-call engineer asks first
// (does it have quorum, are the members ready, is the leader flapping, how old is the newest good
// backup and did its restore drill pass), above the operator's own panels. Every metric here is one
// src/metrics/cluster-gauges.ts or src/metrics/drill-metrics.ts registers.
import { clusterSelector as c, type OperatorDashboard } from '@homeostat/operator-kit/chart';

const byCluster = '{{namespace}}/{{cluster}}';

export const etcdDashboard: OperatorDashboard = {
  title: 'Homeostat / etcd operator',
  uid: 'homeostat-etcd-operator',
  controller: 'etcdcluster',
  clusterMetric: 'etcd_cluster_members_desired',
  rows: [
    {
      title: 'EtcdClusters',
      panels: [
        {
          title: 'Quorum',
          description:
            'Whether a majority of voting members is healthy: without quorum the cluster refuses every write.',
          kind: 'stat',
          queries: [{ expr: `etcd_cluster_quorum${c}`, legend: byCluster }],
          mappings: { 0: 'lost', 1: 'quorum' },
          thresholds: { base: 'red', steps: [{ value: 1, color: 'green' }] },
        },
        {
          title: 'Members ready',
          description:
            'Members that answer healthy, voting members (learners excluded) and the members spec.size asks for. Ready below desired for long: a member is down or being replaced.',
          kind: 'timeseries',
          queries: [
            { expr: `etcd_cluster_members_ready${c}`, legend: `${byCluster} ready` },
            { expr: `etcd_cluster_voting_members${c}`, legend: `${byCluster} voting` },
            { expr: `etcd_cluster_members_desired${c}`, legend: `${byCluster} desired` },
          ],
          unit: 'short',
        },
        {
          title: 'Leader changes per hour',
          description:
            'Leader changes the operator observed in the last hour. An upgrade or a drain moves the leader once or twice; more means slow disks or a flaky network.',
          kind: 'timeseries',
          queries: [{ expr: `increase(etcd_cluster_leader_changes_total${c}[1h])`, legend: byCluster }],
          unit: 'short',
        },
      ],
    },
    {
      title: 'Backups and restore drills',
      panels: [
        {
          title: 'Newest good backup',
          description:
            'Time since the newest backup that was verified and committed finished. Older than the schedule plus slack: backups are not being taken.',
          kind: 'stat',
          queries: [{ expr: `etcd_cluster_last_backup_age_seconds${c}`, legend: byCluster }],
          unit: 's',
          // The age at which EtcdClusterBackupTooOld fires: a daily schedule with an hour of slack.
          thresholds: { steps: [{ value: 25 * 3600, color: 'red' }] },
        },
        {
          title: 'Last restore drill',
          description:
            'Whether the last restore drill proved its backup (the restored copy’s HashKV equal): failed means the backups may not restore.',
          kind: 'stat',
          queries: [{ expr: `etcd_cluster_backup_verified${c}`, legend: byCluster }],
          mappings: { 0: 'failed', 1: 'verified' },
          thresholds: { base: 'red', steps: [{ value: 1, color: 'green' }] },
        },
        {
          title: 'Restore drills by result (24 h)',
          description:
            'Restore drills finished in the last day, by result: Verified, or the reason they failed.',
          kind: 'timeseries',
          queries: [
            {
              expr: `sum by (namespace, cluster, result) (increase(etcd_cluster_backup_drills_total${c}[24h]))`,
              legend: `${byCluster} {{result}}`,
            },
          ],
          unit: 'short',
        },
        {
          title: 'Measured recovery time and point',
          description:
            "The last passed drill's measured recovery time (its start until the restored copy answered) and recovery point (how old the restored backup was).",
          kind: 'timeseries',
          queries: [
            { expr: `etcd_cluster_backup_drill_restore_seconds${c}`, legend: `${byCluster} recovery time` },
            {
              expr: `etcd_cluster_backup_drill_recovery_point_seconds${c}`,
              legend: `${byCluster} recovery point`,
            },
          ],
          unit: 's',
          width: 16,
        },
      ],
    },
  ],
};
