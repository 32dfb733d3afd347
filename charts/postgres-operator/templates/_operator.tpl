{{/* What only the PostgreSQL operator has; everything else comes from charts/homeostat-operator-lib. */}}

{{/* The rules the operator needs on what it manages, wherever it watches (no wildcards). */}}
{{- define "postgres-operator.managerRules" -}}
- apiGroups: [postgres.homeostat.dev]
  resources: [postgresqlclusters]
  verbs: [get, list, watch]
# The failover state and the observed status, through the status subresource only.
- apiGroups: [postgres.homeostat.dev]
  resources: [postgresqlclusters/status]
  verbs: [get, update, patch]
# ownerReferences with blockOwnerDeletion need update on the owner's finalizers.
- apiGroups: [postgres.homeostat.dev]
  resources: [postgresqlclusters/finalizers]
  verbs: [update]
# Base backups: taken once each and recorded (a schedule creates them, retention deletes them).
- apiGroups: [postgres.homeostat.dev]
  resources: [postgresqlbackups]
  verbs: [get, list, watch, create, delete]
- apiGroups: [postgres.homeostat.dev]
  resources: [postgresqlbackups/status]
  verbs: [get, update, patch]
# The pod that takes a backup is owned by its PostgreSQLBackup (blockOwnerDeletion).
- apiGroups: [postgres.homeostat.dev]
  resources: [postgresqlbackups/finalizers]
  verbs: [update]
# Instance pods: created, labelled (routing), deleted (fencing, stops, scaling down); backup and
# expire (retention) pods created and deleted once their result is recorded.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, patch, delete]
# Generated credentials: created once, never regenerated; the superuser's deleted when access is
# off; the owner dropped for storage.retention Retain and the CA added to the client Secrets
# (patch); the TLS server certificate issued again in place before it expires (update).
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}

{{/* The operator's own environment variables (its flags: operators/postgres/src/config). */}}
{{- define "postgres-operator.env" -}}
- name: POSTGRES_17_IMAGE
  value: {{ .Values.postgres17Image | quote }}
- name: POSTGRES_18_IMAGE
  value: {{ .Values.postgres18Image | quote }}
- name: PROBE_INTERVAL_MS
  value: {{ .Values.probeIntervalMs | quote }}
{{- end }}

{{/* What `helm test` asks the operator to reconcile (homeostat-operator.helmTest): the smallest cluster. */}}
{{- define "postgres-operator.helmTestResource" -}}
apiVersion: postgres.homeostat.dev/v1alpha1
kind: PostgreSQLCluster
spec:
  instances: 1
  storage:
    size: 1Gi
{{- end }}
