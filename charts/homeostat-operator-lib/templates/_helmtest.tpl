{{/*
`helm test <release>`: a pod from the operator's own image (/app/helm-test.mjs) proves that the
operator answers (its metrics Service lists its controllers) and that it reconciles (a small
resource of its kind gets a status from it), then deletes that resource and waits until it is
gone. Its ServiceAccount may only read, create and delete that kind, in the namespace the resource
goes to: the release's, or the first watched namespace when the operator does not watch the
release's. On success every test object is deleted; on failure the pod stays for `kubectl logs`.
  {{ include "homeostat-operator.helmTest" (dict "context" . "plural" "memcacheds" "resource" (include "memcached-operator.helmTestResource" .)) }}
  plural:   the kind's plural, for the Role.
  resource: the resource to create (YAML: apiVersion, kind, spec), named <fullname>-helm-test.
*/}}
{{- define "homeostat-operator.helmTest" -}}
{{- $plural := required "homeostat-operator.helmTest needs plural" .plural }}
{{- $resource := fromYaml (required "homeostat-operator.helmTest needs resource" .resource) }}
{{- with .context }}
{{- if .Values.helmTest.enabled }}
{{- if not .Values.metrics.service.enabled }}
{{- fail "helmTest.enabled needs metrics.service.enabled: the test asks the operator through its metrics Service" }}
{{- end }}
{{- $name := printf "%s-helm-test" (include "homeostat-operator.fullname" .) }}
{{- $namespace := .Release.Namespace }}
{{- if and .Values.watchNamespaces (not (has .Release.Namespace .Values.watchNamespaces)) }}
{{- $namespace = first .Values.watchNamespaces }}
{{- end }}
{{- $hook := dict "helm.sh/hook" "test" "helm.sh/hook-delete-policy" "before-hook-creation,hook-succeeded" }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.helmTestLabels" . | nindent 4 }}
  annotations:
    {{- toYaml (merge (dict "helm.sh/hook-weight" "-1") $hook) | nindent 4 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  namespace: {{ $namespace }}
  labels:
    {{- include "homeostat-operator.helmTestLabels" . | nindent 4 }}
  annotations:
    {{- toYaml (merge (dict "helm.sh/hook-weight" "-1") $hook) | nindent 4 }}
rules:
  - apiGroups: [{{ first (splitList "/" $resource.apiVersion) | quote }}]
    resources: [{{ $plural | quote }}]
    verbs: [get, create, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  namespace: {{ $namespace }}
  labels:
    {{- include "homeostat-operator.helmTestLabels" . | nindent 4 }}
  annotations:
    {{- toYaml (merge (dict "helm.sh/hook-weight" "-1") $hook) | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ .Release.Namespace }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.helmTestLabels" . | nindent 4 }}
  annotations:
    {{- toYaml $hook | nindent 4 }}
spec:
  restartPolicy: Never
  serviceAccountName: {{ $name }}
  automountServiceAccountToken: true
  enableServiceLinks: false
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: helm-test
      image: {{ include "homeostat-operator.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      command: ["node", "/app/helm-test.mjs"]
      env:
        - name: METRICS_URL
          value: {{ printf "http://%s-metrics.%s.svc:%v/metrics" (include "homeostat-operator.fullname" .) .Release.Namespace .Values.metrics.service.port | quote }}
        - name: TEST_RESOURCE
          value: {{ toJson $resource | quote }}
        - name: TEST_PLURAL
          value: {{ $plural | quote }}
        - name: TEST_NAME
          value: {{ $name | quote }}
        - name: TEST_NAMESPACE
          value: {{ $namespace | quote }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The test objects' labels: not the operator's selector labels (another app.kubernetes.io/name), or
the operator's ReplicaSet would adopt the test pod and its metrics Service send requests to it.
*/}}
{{- define "homeostat-operator.helmTestLabels" -}}
helm.sh/chart: {{ include "homeostat-operator.chart" . }}
app.kubernetes.io/name: {{ include "homeostat-operator.name" . }}-helm-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: helm-test
app.kubernetes.io/part-of: homeostat
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
