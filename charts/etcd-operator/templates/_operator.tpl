{{/* What only the etcd operator has; everything else comes from charts/homeostat-operator-lib. */}}

{{/* The rules the operator needs on what it manages, wherever it watches (no wildcards). */}}
{{- define "etcd-operator.managerRules" -}}
- apiGroups: [etcd.homeostat.dev]
  resources: [etcdclusters]
  verbs: [get, list, watch]
- apiGroups: [etcd.homeostat.dev]
  resources: [etcdclusters/status]
  verbs: [get, update, patch]
# ownerReferences with blockOwnerDeletion need update on the owner's finalizers.
- apiGroups: [etcd.homeostat.dev]
  resources: [etcdclusters/finalizers]
  verbs: [update]
# Backups: taken and recorded; the schedule creates them and deletes those retention drops.
- apiGroups: [etcd.homeostat.dev]
  resources: [etcdbackups]
  verbs: [get, list, watch, create, delete]
- apiGroups: [etcd.homeostat.dev]
  resources: [etcdbackups/status]
  verbs: [get, update, patch]
# The pods that write a backup into a claim or delete it from one are owned by their EtcdBackup
# (blockOwnerDeletion).
- apiGroups: [etcd.homeostat.dev]
  resources: [etcdbackups/finalizers]
  verbs: [update]
# Member pods and their claims are made and deleted one at a time; a pod is patched only to change
# its etcd image in a rolling upgrade (the one field of a pod that can change). A restore drill
# makes and deletes a pod and a claim of its own (ADR 0311).
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete, patch]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch, create, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, update, patch, delete]
# The CA and certificates it generates (made once, never rewritten), a provided client Secret, and
# the credentials Secret a backup destination names.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}

{{/* The operator's own environment variables (its flags: operators/etcd/src/config). */}}
{{- define "etcd-operator.env" -}}
- name: ETCD_IMAGE_REPOSITORY
  value: {{ .Values.etcdImageRepository | quote }}
- name: CLUSTER_DOMAIN
  value: {{ .Values.clusterDomain | quote }}
# Its own image: the first member of a cluster restored from a backup runs the restore steps in it.
- name: OPERATOR_IMAGE
  value: {{ include "homeostat-operator.image" . | quote }}
{{- end }}

{{/* What `helm test` asks the operator to reconcile (homeostat-operator.helmTest): the smallest cluster. */}}
{{- define "etcd-operator.helmTestResource" -}}
apiVersion: etcd.homeostat.dev/v1alpha1
kind: EtcdCluster
spec:
  size: 1
{{- end }}
