{{/*
Metrics: a ClusterIP Service in front of the operator's /metrics, and an opt-in Prometheus
Operator ServiceMonitor that selects it.
  {{ include "homeostat-operator.metricsService" . }}
  {{ include "homeostat-operator.serviceMonitor" . }}
*/}}
{{- define "homeostat-operator.metricsService" -}}
{{- if .Values.metrics.service.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "homeostat-operator.fullname" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "homeostat-operator.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ .Values.metrics.service.port }}
      targetPort: metrics
      protocol: TCP
{{- end }}
{{- end }}

{{- define "homeostat-operator.serviceMonitor" -}}
{{- if .Values.prometheus.serviceMonitor.enabled }}
{{- if not .Values.metrics.service.enabled }}
{{- fail "prometheus.serviceMonitor.enabled needs metrics.service.enabled" }}
{{- end }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "homeostat-operator.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" . | nindent 4 }}
    {{- with .Values.prometheus.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "homeostat-operator.selectorLabels" . | nindent 6 }}
      app.kubernetes.io/component: operator
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ .Values.prometheus.serviceMonitor.interval }}
      # The per-cluster series carry the cluster's own namespace label; without this Prometheus
      # would rename it exported_namespace and put the operator's namespace in its place.
      honorLabels: true
{{- end }}
{{- end }}

{{/*
A ServiceMonitor for what an operator runs (its operands' own metrics), opt-in: every Service of
`operand` made by `managedBy` that has a `metrics` port, in the watched namespaces (or any).
Called with (dict "root" . "values" <its values> "suffix" <name suffix> "operand" <app name>
"managedBy" <operator name>).
*/}}
{{- define "homeostat-operator.operandServiceMonitor" -}}
{{- $root := .root }}
{{- if (.values | default dict).enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "homeostat-operator.fullname" $root }}-{{ .suffix }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" $root | nindent 4 }}
    {{- with .values.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ .operand }}
      app.kubernetes.io/managed-by: {{ .managedBy }}
  namespaceSelector:
    {{- if $root.Values.watchNamespaces }}
    matchNames:
      {{- toYaml $root.Values.watchNamespaces | nindent 6 }}
    {{- else }}
    any: true
    {{- end }}
  endpoints:
    - port: metrics
      path: /metrics
      scheme: http
      interval: {{ .values.interval }}
{{- end }}
{{- end }}
