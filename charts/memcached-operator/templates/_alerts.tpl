{{/* The alerts on Memcached caches, beside the operator's own from charts/homeostat-operator-lib:
  pods missing from the operator's gauges (its job), and what each pod's metrics sidecar reports
  (container="exporter", scraped through the chart's cachesServiceMonitor). Thresholds and why:
  docs/adr/0011-alerts-in-the-charts-tested-with-promtool.md. */}}
{{- define "memcached-operator.alertGroups" -}}
{{- $job := include "homeostat-operator.alertJob" . }}
- name: {{ include "homeostat-operator.fullname" . }}.caches
  rules:
    - alert: MemcachedCacheDown
      # A rollout keeps maxUnavailable pods serving; no pod ready for 3 minutes is an outage.
      expr: memcached_cache_pods_ready{ {{- $job -}} } == 0 and memcached_cache_pods_desired{ {{- $job -}} } > 0
      for: 3m
      labels:
        severity: critical
      annotations:
        summary: {{ `Memcached {{ $labels.namespace }}/{{ $labels.cache }} has no pod ready` }}
        description: >-
          {{ `No pod of {{ $labels.namespace }}/{{ $labels.cache }} has been ready for 3 minutes:
          every read misses and goes to the backing store.` }} `kubectl describe memcached` and the
          pods' Events say why (image pull, scheduling, resources, a crash).
    - alert: MemcachedPodsNotReady
      # A pod rescheduled or rolled is ready within a minute or two.
      expr: memcached_cache_pods_ready{ {{- $job -}} } < memcached_cache_pods_desired{ {{- $job -}} }
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: {{ `Memcached {{ $labels.namespace }}/{{ $labels.cache }} has pods missing` }}
        description: >-
          {{ `Only {{ $value }} pod(s) of {{ $labels.namespace }}/{{ $labels.cache }} have been
          ready for 10 minutes, fewer than spec.size: the keys hashed to the missing ones miss.` }}
          `kubectl describe memcached` and the pods' Events say which and why.
    - alert: MemcachedNotAnswering
      # The sidecar reaches memcached in its own pod; a restart answers again within seconds.
      expr: memcached_up{container="exporter"} == 0
      for: 5m
      labels:
        severity: warning
      annotations:
        summary: {{ `memcached in pod {{ $labels.namespace }}/{{ $labels.pod }} does not answer` }}
        description: >-
          {{ `The metrics sidecar of {{ $labels.namespace }}/{{ $labels.pod }} has not reached the
          memcached beside it for 5 minutes.` }} The pod's memcached container logs and its
          restarts say why (out of memory, a wrong argument).
    - alert: MemcachedEvictionsHigh
      # Evicting valid items is how a full cache makes room; more than one per ten sets for half
      # an hour means the working set does not fit.
      expr: >-
        sum by (namespace, service) (rate(memcached_items_evicted_total{container="exporter"}[15m]))
        > 0.1 * sum by (namespace, service) (rate(memcached_commands_total{container="exporter", command="set"}[15m]))
      for: 30m
      labels:
        severity: warning
      annotations:
        summary: {{ `Memcached {{ $labels.namespace }}/{{ $labels.service }} evicts items it still needs` }}
        description: >-
          {{ `{{ $labels.namespace }}/{{ $labels.service }} has been evicting valid items for more
          than one in ten sets for 30 minutes: its working set does not fit in memory, and the hit
          ratio pays for it.` }} Raise spec.memoryLimitMB (and any memory limit set in spec.resources)
          or spec.size.
    - alert: MemcachedConnectionsNearLimit
      # memcached's own limit (-c, 1024 by default); at it, it stops accepting connections.
      expr: >-
        max by (namespace, service, pod) (memcached_current_connections{container="exporter"}
        / memcached_max_connections{container="exporter"}) > 0.9
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: {{ `memcached in pod {{ $labels.namespace }}/{{ $labels.pod }} is near its connection limit` }}
        description: >-
          {{ `{{ $labels.namespace }}/{{ $labels.pod }} has used over 90 % of its connections for
          10 minutes ({{ $value | humanizePercentage }}); at the limit it refuses new ones.` }}
          Look for clients that open a connection per request or never close one; more pods
          (spec.size) spread the connections of clients that hash keys over every pod.
{{- end }}
