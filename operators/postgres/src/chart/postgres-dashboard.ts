// The PostgreSQL operator's Grafana dashboard: per PostgreSQLCluster, what the on-call engineer
// asks first (is there a primary, are the instances ready, did it fail over, how far behind are the
// replicas, is WAL being archived, when did a backup last restore), above the operator's own panels.
// Every metric here is one src/controllers/cluster-metrics.ts or the restore drill registers.
import { clusterSelector as c, type OperatorDashboard } from '@homeostat/operator-kit/chart';

const byCluster = '{{namespace}}/{{cluster}}';

export const postgresDashboard: OperatorDashboard = {
  title: 'Homeostat / PostgreSQL operator',
  uid: 'homeostat-postgres-operator',
  controller: 'postgresqlcluster',
  clusterMetric: 'homeostat_postgres_instances',
  rows: [
    {
      title: 'PostgreSQLClusters',
      panels: [
        {
          title: 'Primary unreachable',
          description:
            'Seconds the primary has been unreachable or not taking writes; 0 while it takes writes. Failover normally ends an outage within about a minute.',
          kind: 'stat',
          queries: [{ expr: `homeostat_postgres_primary_unreachable_seconds${c}`, legend: byCluster }],
          unit: 's',
          thresholds: {
            steps: [
              { value: 1, color: 'orange' },
              { value: 60, color: 'red' },
            ],
          },
          width: 8,
        },
        {
          title: 'Instances ready',
          description:
            'Instances ready in their role (the primary taking writes, replicas streaming) against the instance pods. Fewer ready than pods: a replica is down, not streaming or still cloning.',
          kind: 'timeseries',
          queries: [
            { expr: `homeostat_postgres_instances_ready${c}`, legend: `${byCluster} ready` },
            { expr: `homeostat_postgres_instances${c}`, legend: `${byCluster} pods` },
          ],
          unit: 'short',
        },
        {
          title: 'Failovers and switchovers',
          description:
            'Failovers (the primary failed, a replica was promoted) and planned switchovers so far, from the counts in the status (they survive operator restarts): each step up is one.',
          kind: 'timeseries',
          queries: [
            { expr: `homeostat_postgres_failovers_total${c}`, legend: `${byCluster} failovers` },
            { expr: `homeostat_postgres_switchovers_total${c}`, legend: `${byCluster} switchovers` },
          ],
          unit: 'short',
        },
        {
          title: 'Replication lag per replica',
          description:
            'WAL bytes each replica has not replayed yet. A failover to a lagging replica replays that much first, and reads from it are stale.',
          kind: 'timeseries',
          queries: [
            {
              expr: `homeostat_postgres_replication_lag_bytes${c}`,
              legend: `${byCluster} {{instance}}`,
            },
          ],
          unit: 'bytes',
          width: 12,
        },
        {
          title: 'WAL archiving',
          description:
            'Whether the primary fails to archive WAL segments (spec.backup). Failing for minutes: credentials, bucket or network, and WAL piling up on the primary.',
          kind: 'stat',
          queries: [{ expr: `homeostat_postgres_wal_archive_failing${c}`, legend: byCluster }],
          mappings: { 0: 'archiving', 1: 'failing' },
          thresholds: { steps: [{ value: 1, color: 'red' }] },
          width: 6,
        },
        {
          title: 'Last WAL archived',
          description:
            "Seconds since the primary last archived a WAL segment. Growing past the cluster's archiveTimeout (plus an upload) means archiving is stuck.",
          kind: 'timeseries',
          queries: [{ expr: `homeostat_postgres_wal_archive_age_seconds${c}`, legend: byCluster }],
          unit: 's',
          width: 6,
        },
      ],
    },
    {
      title: 'Backups and restore drills',
      panels: [
        {
          title: 'Last verified backup',
          description:
            'Time since a restore drill last restored a backup of the cluster and checked it. Old means nothing has proved lately that the backups restore.',
          kind: 'stat',
          queries: [
            {
              expr: `time() - homeostat_postgres_backup_verified_timestamp_seconds${c}`,
              legend: byCluster,
            },
          ],
          unit: 's',
          // The age at which PostgresVerifiedBackupOld fires: weekly drills with a day of slack.
          thresholds: { steps: [{ value: 8 * 24 * 3600, color: 'red' }] },
        },
        {
          title: 'Last restore drill',
          description: 'The result of the last restore drill: failed means the backups may not restore.',
          kind: 'stat',
          queries: [{ expr: `homeostat_postgres_restore_drill_failing${c}`, legend: byCluster }],
          mappings: { 0: 'passed', 1: 'failed' },
          thresholds: { steps: [{ value: 1, color: 'red' }] },
        },
        {
          title: 'Measured recovery time',
          description:
            "The last passed drill's restore and replay time: the recovery time (RTO) a restore takes.",
          kind: 'timeseries',
          queries: [{ expr: `homeostat_postgres_restore_drill_duration_seconds${c}`, legend: byCluster }],
          unit: 's',
        },
      ],
    },
  ],
};
