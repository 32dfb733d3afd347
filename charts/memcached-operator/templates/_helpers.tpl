{{/* The chart name, or nameOverride. */}}
{{- define "memcached-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* "<release>-<chart>" unless the release name already contains the chart name; fullnameOverride wins. */}}
{{- define "memcached-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "memcached-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the operator's pods (never change them: Deployment selectors are immutable). */}}
{{- define "memcached-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "memcached-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels on every object of the release. */}}
{{- define "memcached-operator.labels" -}}
helm.sh/chart: {{ include "memcached-operator.chart" . }}
{{ include "memcached-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: homeostat
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "memcached-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "memcached-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Lease the replicas elect a leader with; the leader-election Role names exactly this one. */}}
{{- define "memcached-operator.leaseName" -}}
{{- include "memcached-operator.fullname" . }}
{{- end }}

{{- define "memcached-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The rules the operator needs on what it manages, wherever it watches (no wildcards). */}}
{{- define "memcached-operator.managerRules" -}}
- apiGroups: [cache.homeostat.dev]
  resources: [memcacheds]
  verbs: [get, list, watch]
- apiGroups: [cache.homeostat.dev]
  resources: [memcacheds/status]
  verbs: [get, update, patch]
# ownerReferences with blockOwnerDeletion need update on the owner's finalizers.
- apiGroups: [cache.homeostat.dev]
  resources: [memcacheds/finalizers]
  verbs: [update]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, update, patch, delete]
# Pods are only read: their readiness and names go into the Memcached status.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
