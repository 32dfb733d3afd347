{{/* The operator's ServiceAccount: {{ include "homeostat-operator.serviceAccount" . }} */}}
{{- define "homeostat-operator.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "homeostat-operator.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
# The operator reaches the API server through its projected token (see the Deployment).
automountServiceAccountToken: false
{{- end }}
{{- end }}
