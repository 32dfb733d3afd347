{{/* The alerts on PostgreSQLClusters, beside the operator's own from charts/homeostat-operator-lib.
  Thresholds and why: docs/adr/0011-alerts-in-the-charts-tested-with-promtool.md. */}}
{{- define "postgres-operator.alertGroups" -}}
{{- $job := include "homeostat-operator.alertJob" . }}
- name: {{ include "homeostat-operator.fullname" . }}.clusters
  rules:
    - alert: PostgresPrimaryUnreachable
      # Failover normally ends this within a minute; two more mean it could not.
      expr: homeostat_postgres_primary_unreachable_seconds{ {{- $job -}} } > 60
      for: 2m
      labels:
        severity: critical
      annotations:
        summary: {{ `PostgreSQLCluster {{ $labels.namespace }}/{{ $labels.cluster }} has no primary taking writes` }}
        description: >-
          {{ `The primary of {{ $labels.namespace }}/{{ $labels.cluster }} has been unreachable or
          not taking writes for {{ $value | humanizeDuration }}, and no failover has replaced it:
          applications cannot write.` }} See the Failover and Degraded conditions and the Events
          (`kubectl describe pgc`), and the instance pods' logs.
    - alert: PostgresFailoverHappened
      # An event, not a state: it fires for the 15 minutes after a failover, then resolves.
      expr: increase(homeostat_postgres_failovers_total{ {{- $job -}} }[15m]) > 0
      labels:
        severity: warning
      annotations:
        summary: {{ `PostgreSQLCluster {{ $labels.namespace }}/{{ $labels.cluster }} failed over` }}
        description: >-
          {{ `The operator promoted a replica of {{ $labels.namespace }}/{{ $labels.cluster }}
          because its primary failed.` }} Writes resumed on the new primary; find out why the old
          one failed (its pod's Events and logs, its node) and check that it rejoined as a replica
          (`kubectl get pgc` shows the primary and ready instances).
    - alert: PostgresInstancesNotReady
      expr: homeostat_postgres_instances_ready{ {{- $job -}} } < homeostat_postgres_instances{ {{- $job -}} }
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: {{ `PostgreSQLCluster {{ $labels.namespace }}/{{ $labels.cluster }} has instances not ready` }}
        description: >-
          {{ `Only {{ $value }} instance(s) of {{ $labels.namespace }}/{{ $labels.cluster }} have
          been ready in their role for 10 minutes, fewer than its instance pods: a replica is
          down, not streaming or still cloning, and the cluster has less redundancy than asked.` }}
          The Degraded condition and the instance statuses (`kubectl describe pgc`) say which and why.
    - alert: PostgresReplicationLagHigh
      expr: homeostat_postgres_replication_lag_bytes{ {{- $job -}} } > 1073741824
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: {{ `Replica {{ $labels.instance }} of {{ $labels.namespace }}/{{ $labels.cluster }} lags more than 1 GiB` }}
        description: >-
          {{ `Replica {{ $labels.instance }} of {{ $labels.namespace }}/{{ $labels.cluster }} has
          been more than 1 GiB of WAL behind its primary for 10 minutes ({{ $value | humanize1024 }}B
          now): a failover to it would wait to replay that much, and reads from it are stale.` }}
          Look for a slow disk or network on its node, or a write load it cannot keep up with.
    - alert: PostgresWalArchivingFailing
      expr: homeostat_postgres_wal_archive_failing{ {{- $job -}} } == 1
      for: 10m
      labels:
        severity: critical
      annotations:
        summary: {{ `PostgreSQLCluster {{ $labels.namespace }}/{{ $labels.cluster }} fails to archive WAL` }}
        description: >-
          {{ `The primary of {{ $labels.namespace }}/{{ $labels.cluster }} has failed to archive WAL
          segments for 10 minutes.` }} A restore could lose everything written since the last
          archived segment, and unarchived WAL fills the primary's disk. The Archiving condition
          (`kubectl describe pgc`) and the primary's logs give pgBackRest's error: credentials,
          bucket, or network.
    - alert: PostgresWalArchiveStale
      # Above the longest archiveTimeout the API allows (1h), with an hour for slow uploads.
      expr: homeostat_postgres_wal_archive_age_seconds{ {{- $job -}} } > 7200
      for: 15m
      labels:
        severity: warning
      annotations:
        summary: {{ `PostgreSQLCluster {{ $labels.namespace }}/{{ $labels.cluster }} has archived no WAL for 2 hours` }}
        description: >-
          {{ `The primary of {{ $labels.namespace }}/{{ $labels.cluster }} last archived a WAL
          segment {{ $value | humanizeDuration }} ago, longer than any archiveTimeout: archiving is
          stuck without reporting a failure.` }} A restore would lose what was written since. Check
          the primary's logs and the Archiving condition.
    - alert: PostgresRestoreDrillFailing
      expr: homeostat_postgres_restore_drill_failing{ {{- $job -}} } == 1
      for: 5m
      labels:
        severity: warning
      annotations:
        summary: {{ `The last restore drill of {{ $labels.namespace }}/{{ $labels.cluster }} failed` }}
        description: >-
          {{ `The last restore drill of {{ $labels.namespace }}/{{ $labels.cluster }} could not
          restore and check a backup: the backups may not bring the cluster back.` }} The
          BackupVerified condition and the drill's Events (`kubectl describe pgc`) say why.
    - alert: PostgresVerifiedBackupOld
      # A weekly drill schedule with a day of slack.
      expr: time() - homeostat_postgres_backup_verified_timestamp_seconds{ {{- $job -}} } > 691200
      for: 15m
      labels:
        severity: warning
      annotations:
        summary: {{ `No backup of {{ $labels.namespace }}/{{ $labels.cluster }} has been verified for 8 days` }}
        description: >-
          {{ `The newest backup of {{ $labels.namespace }}/{{ $labels.cluster }} that a restore
          drill restored and checked is from {{ $value | humanizeDuration }} ago.` }} Check that
          base backups and drills are scheduled and succeed (`kubectl get pgbackup`, the
          BackupVerified condition).
{{- end }}
