{{/*
Alerts: an opt-in Prometheus Operator PrometheusRule with the alerts every operator shares
(operator down, reconcile errors, work queue backing up) and the operator chart's own groups.
  {{ include "homeostat-operator.prometheusRule" (dict "context" . "alertPrefix" "PostgresOperator" "operator" "PostgreSQL" "groups" (include "<chart>.alertGroups" .)) }}
The alerts select the operator's series by the job the chart's ServiceMonitor gives them (the
metrics Service's name), so another operator's controller_runtime_* series never fire them.
Thresholds and why: docs/adr/0011-alerts-in-the-charts-tested-with-promtool.md.
*/}}
{{- define "homeostat-operator.alertJob" -}}
job="{{ include "homeostat-operator.fullname" . }}-metrics"
{{- end }}

{{- define "homeostat-operator.prometheusRule" -}}
{{- $ := .context }}
{{- $values := $.Values.prometheus.prometheusRule }}
{{- if $values.enabled }}
{{- if not $.Values.prometheus.serviceMonitor.enabled }}
{{- fail "prometheus.prometheusRule.enabled needs prometheus.serviceMonitor.enabled (the alerts select the operator's series by the job its ServiceMonitor gives them)" }}
{{- end }}
{{- $job := include "homeostat-operator.alertJob" $ }}
{{- $scope := printf "%s, namespace=\"%s\"" $job $.Release.Namespace }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "homeostat-operator.fullname" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" $ | nindent 4 }}
    {{- with $values.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
    - name: {{ include "homeostat-operator.fullname" $ }}.operator
      rules:
        - alert: {{ .alertPrefix }}Down
          # No target of the job up (or none at all: no pod, no endpoint) for 5 minutes. absent()
          # of a comparison keeps no label, so the alert names the job and namespace itself (the
          # other alerts carry them from their series), for routing by namespace.
          expr: absent(up{ {{- $scope -}} } == 1)
          for: 5m
          labels:
            severity: critical
            job: {{ include "homeostat-operator.fullname" $ }}-metrics
            namespace: {{ $.Release.Namespace }}
          annotations:
            summary: The {{ .operator }} operator is down
            description: >-
              No pod of the {{ .operator }} operator ({{ include "homeostat-operator.fullname" $ }}
              in namespace {{ $.Release.Namespace }}) has answered a scrape for 5 minutes. Until
              one is back, nothing reconciles the {{ .operator }} resources it manages: a failed pod,
              a spec change, a failover or a scheduled backup waits. See
              `kubectl -n {{ $.Release.Namespace }} get pods` and the pods' logs and Events.
        - alert: {{ .alertPrefix }}ReconcileErrors
          # The per-key backoff is capped at 1000 s, so a key that keeps failing errs at least once
          # in every 20 minutes; a single error stays in the window 20 minutes, less than `for`.
          expr: sum by (job, namespace, controller) (increase(controller_runtime_reconcile_errors_total{ {{- $scope -}} }[20m])) > 0
          for: 30m
          labels:
            severity: warning
          annotations:
            summary: {{ `The {{ $labels.controller }} controller keeps failing to reconcile` }}
            description: >-
              {{ `Controller {{ $labels.controller }}` }} of the {{ .operator }} operator
              ({{ include "homeostat-operator.fullname" $ }} in namespace {{ $.Release.Namespace }})
              has failed reconciles for 30 minutes without a 20-minute break: a resource it
              manages is not converging. The operator's logs name the resource, the step and the
              cause; `kubectl describe` of the resource shows the condition and Events.
        - alert: {{ .alertPrefix }}WorkQueueBackingUp
          expr: workqueue_depth{ {{- $scope -}} } > 100
          for: 15m
          labels:
            severity: warning
          annotations:
            summary: {{ `The {{ $labels.name }} work queue is backing up` }}
            description: >-
              {{ `Work queue {{ $labels.name }}` }} of the {{ .operator }} operator
              ({{ include "homeostat-operator.fullname" $ }} in namespace {{ $.Release.Namespace }})
              has held more than 100 resources waiting for 15 minutes ({{ `{{ $value }}` }} now):
              changes reach them late. The operator is starved of CPU, its API server calls are
              slow, or it has more resources than maxConcurrentReconciles workers keep up with.
    {{- with .groups }}
    {{- trim . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end }}
