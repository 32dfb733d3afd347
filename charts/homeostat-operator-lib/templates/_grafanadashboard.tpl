{{/*
Dashboard: an opt-in ConfigMap with the operator chart's Grafana dashboard
(dashboards/<chart>.json, generated from the operator's TypeScript by `npm run generate`), labelled
for the Grafana sidecar to load it.
  {{ include "homeostat-operator.grafanaDashboard" . }}
Its queries pick the operator's series by the job a scrape gives them (the dashboard's `job`
variable), so it shows data once Prometheus scrapes the operator (prometheus.serviceMonitor).
*/}}
{{- define "homeostat-operator.grafanaDashboard" -}}
{{- $values := .Values.grafana.dashboard }}
{{- if $values.enabled }}
{{- $file := printf "dashboards/%s.json" .Chart.Name }}
{{- $json := .Files.Get $file }}
{{- if not $json }}
{{- fail (printf "grafana.dashboard.enabled: the chart has no %s" $file) }}
{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "homeostat-operator.fullname" . }}-dashboard
  namespace: {{ $values.namespace | default .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" . | nindent 4 }}
    {{- with $values.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $values.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  {{ .Chart.Name }}.json: {{ $json | toJson }}
{{- end }}
{{- end }}
