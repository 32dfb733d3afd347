{{/*
Names and labels. Each template takes the operator chart's own context (`.`), so .Chart is the
operator chart, never this library.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "homeostat-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* "<release>-<chart>" unless the release name already contains the chart name; fullnameOverride wins. */}}
{{- define "homeostat-operator.fullname" -}}
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

{{- define "homeostat-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the operator's pods (never change them: Deployment selectors are immutable). */}}
{{- define "homeostat-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "homeostat-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels on every object of the release, the generated CRD templates included. */}}
{{- define "homeostat-operator.labels" -}}
helm.sh/chart: {{ include "homeostat-operator.chart" . }}
{{ include "homeostat-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: homeostat
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "homeostat-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "homeostat-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Lease the replicas elect a leader with; the leader-election Role names exactly this one. */}}
{{- define "homeostat-operator.leaseName" -}}
{{- include "homeostat-operator.fullname" . }}
{{- end }}

{{- define "homeostat-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}
