{{/*
RBAC, no wildcards: the operator's own rules in a ClusterRole (watching every namespace) or in a
Role per watched namespace, and a leader-election Role that may create Leases but read and renew
only the one named by homeostat-operator.leaseName.
  {{ include "homeostat-operator.rbac" (dict "context" . "rules" (include "memcached-operator.managerRules" .)) }}
  rules: the rules (a YAML list) the operator needs on what it manages, wherever it watches.
*/}}
{{- define "homeostat-operator.rbac" -}}
{{- $top := .context }}
{{- $rules := required "homeostat-operator.rbac needs rules" .rules }}
{{- if $top.Values.rbac.create }}
{{- $fullname := include "homeostat-operator.fullname" $top }}
{{- $serviceAccount := include "homeostat-operator.serviceAccountName" $top }}
{{- if not $top.Values.watchNamespaces }}
# Watching every namespace: one ClusterRole, bound cluster-wide.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "homeostat-operator.labels" $top | nindent 4 }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "homeostat-operator.labels" $top | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}
subjects:
  - kind: ServiceAccount
    name: {{ $serviceAccount }}
    namespace: {{ $top.Release.Namespace }}
{{- else }}
{{- range $top.Values.watchNamespaces }}
---
# Watching only {{ . }}: a Role and RoleBinding there, nothing cluster-wide.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}
  namespace: {{ . }}
  labels:
    {{- include "homeostat-operator.labels" $top | nindent 4 }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}
  namespace: {{ . }}
  labels:
    {{- include "homeostat-operator.labels" $top | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}
subjects:
  - kind: ServiceAccount
    name: {{ $serviceAccount }}
    namespace: {{ $top.Release.Namespace }}
{{- end }}
{{- end }}
{{- if $top.Values.leaderElection.enabled }}
---
# Leader election: create the Lease, then read and renew only that one Lease by name.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}-leader-election
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" $top | nindent 4 }}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [{{ include "homeostat-operator.leaseName" $top | quote }}]
    verbs: [get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}-leader-election
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" $top | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ $serviceAccount }}
    namespace: {{ $top.Release.Namespace }}
{{- end }}
{{- end }}
{{- end }}
