{{/* What only the Memcached operator has; everything else comes from charts/homeostat-operator-lib. */}}

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
  resources: [statefulsets]
  verbs: [get, list, watch, create, update, patch, delete]
# Deployments are only what an operator before ADR 0404 made: watched, and deleted once the
# StatefulSet that replaces one serves.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, delete]
# The server list (<name>-servers) applications mount.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, update, patch, delete]
# spec.networkPolicy: the policy that admits only the named clients.
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch, create, update, patch, delete]
# Only get, never list or watch: the Secrets spec.tls and spec.sasl name are read one by one to check
# their keys before pods mount them (their values are never cached, logged or reported).
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
# Pods are only read: their readiness and names go into the Memcached status.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}

{{/* The operator's own environment variables (its flags: operators/memcached/src/config). */}}
{{- define "memcached-operator.env" -}}
- name: MEMCACHED_IMAGE
  value: {{ .Values.memcachedImage | quote }}
- name: MEMCACHED_EXPORTER_IMAGE
  value: {{ .Values.memcachedExporterImage | quote }}
{{- end }}

{{/* What `helm test` asks the operator to reconcile (homeostat-operator.helmTest): the smallest cache. */}}
{{- define "memcached-operator.helmTestResource" -}}
apiVersion: cache.homeostat.dev/v1alpha1
kind: Memcached
spec:
  size: 1
{{- end }}
