{{/* The alerts on EtcdClusters, beside the operator's own from charts/homeostat-operator-lib.
  Thresholds and why: docs/adr/0011-alerts-in-the-charts-tested-with-promtool.md. */}}
{{- define "etcd-operator.alertGroups" -}}
{{- $job := include "homeostat-operator.alertJob" . }}
- name: {{ include "homeostat-operator.fullname" . }}.clusters
  rules:
    - alert: EtcdClusterQuorumLost
      # Bootstrap and a member's restart take well under 3 minutes.
      expr: etcd_cluster_quorum{ {{- $job -}} } == 0
      for: 3m
      labels:
        severity: critical
      annotations:
        summary: {{ `EtcdCluster {{ $labels.namespace }}/{{ $labels.cluster }} has lost quorum` }}
        description: >-
          {{ `Fewer than a majority of the voting members of {{ $labels.namespace }}/{{ $labels.cluster }}
          have been healthy for 3 minutes: the cluster takes no writes and its clients fail.` }}
          The Available condition and the Events (`kubectl describe etcdc`) say which members are
          down; with spec.backup the operator recovers from the newest backup on the members'
          evidence (see the quorum-loss recovery guide).
    - alert: EtcdClusterMembersNotReady
      # Adding a member (a learner that catches up, then is promoted) takes minutes.
      expr: etcd_cluster_members_ready{ {{- $job -}} } < etcd_cluster_members_desired{ {{- $job -}} }
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: {{ `EtcdCluster {{ $labels.namespace }}/{{ $labels.cluster }} has members down` }}
        description: >-
          {{ `Only {{ $value }} member(s) of {{ $labels.namespace }}/{{ $labels.cluster }} have
          answered healthy for 10 minutes, fewer than spec.size: one more failure may cost the
          quorum.` }} `kubectl describe etcdc` and the member pods' Events and logs say which and why.
    - alert: EtcdClusterLeaderChangesFrequent
      expr: increase(etcd_cluster_leader_changes_total{ {{- $job -}} }[1h]) > 3
      for: 5m
      labels:
        severity: warning
      annotations:
        summary: {{ `EtcdCluster {{ $labels.namespace }}/{{ $labels.cluster }} keeps changing leaders` }}
        description: >-
          {{ `The operator saw the leader of {{ $labels.namespace }}/{{ $labels.cluster }} change
          {{ $value | humanize }} times in the last hour.` }} Each change stalls writes for an
          election; look for slow disks (fsync), CPU starvation or a flaky network between members.
    - alert: EtcdClusterBackupTooOld
      # A daily schedule with an hour of slack; absent until a first backup.
      expr: etcd_cluster_last_backup_age_seconds{ {{- $job -}} } > 90000
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: {{ `The newest backup of EtcdCluster {{ $labels.namespace }}/{{ $labels.cluster }} is over a day old` }}
        description: >-
          {{ `The newest verified backup of {{ $labels.namespace }}/{{ $labels.cluster }} finished
          {{ $value | humanizeDuration }} ago.` }} A restore or a quorum-loss recovery would lose
          everything since. Check the backup schedule and the latest EtcdBackups (`kubectl get etcdbk`).
    - alert: EtcdClusterBackupVerificationFailed
      expr: etcd_cluster_backup_verified{ {{- $job -}} } == 0
      for: 5m
      labels:
        severity: warning
      annotations:
        summary: {{ `The last restore drill of EtcdCluster {{ $labels.namespace }}/{{ $labels.cluster }} failed` }}
        description: >-
          {{ `The last restore drill of {{ $labels.namespace }}/{{ $labels.cluster }} could not
          restore a backup with the cluster's data: the backups may not bring it back.` }} The
          BackupVerified condition and the drill's Events (`kubectl describe etcdc`) say why.
{{- end }}
