{{/*
The parts of NOTES.txt every operator chart prints; the chart writes its own example between them.
  {{ include "homeostat-operator.notes.running" (dict "context" . "operator" "Memcached") }}
  {{ include "homeostat-operator.notes.crds" (dict "context" . "crds" "the Memcached CRD" "resources" "Memcacheds") }}
*/}}
{{- define "homeostat-operator.notes.running" -}}
{{- with .context -}}
The {{ $.operator }} operator is running in {{ .Release.Namespace }}{{ if .Values.watchNamespaces }}, watching {{ join ", " .Values.watchNamespaces }}{{ else }}, watching all namespaces{{ end }}.
{{- end }}
{{- end }}

{{- define "homeostat-operator.notes.crds" -}}
{{- if not .context.Values.crds.enabled }}

crds.enabled is false: install {{ .crds }} yourself before creating {{ .resources }}.
{{- end }}
{{- end }}
