{{/*
The operator Deployment: Pod Security "restricted" contexts from values, the leader-election and
port flags every operator reads (libs/operator-kit), probes on /healthz and /readyz, metrics on 8080.
  {{ include "homeostat-operator.deployment" (dict "context" . "kind" "Memcached" "env" (include "memcached-operator.env" .)) }}
  kind:         what the operator manages, for the message that refuses two replicas without leader election.
  env:          the operator's own environment variables (a YAML list), after WATCH_NAMESPACES; may be "".
  volumeMounts: optional, the operator container's mounts (a YAML list), e.g. a scratch emptyDir
                (the root filesystem is read-only).
  volumes:      optional, the pod's volumes (a YAML list) those mounts name.
*/}}
{{- define "homeostat-operator.deployment" -}}
{{- $env := .env }}
{{- $volumeMounts := .volumeMounts }}
{{- $volumes := .volumes }}
{{- $kind := required "homeostat-operator.deployment needs kind" .kind }}
{{- with .context }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicaCount > 1 needs leaderElection.enabled: two active operators would fight over every %s" $kind) }}
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "homeostat-operator.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "homeostat-operator.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicaCount }}
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      {{- include "homeostat-operator.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "homeostat-operator.labels" . | nindent 8 }}
        {{- with .Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "homeostat-operator.serviceAccountName" . }}
      automountServiceAccountToken: true
      enableServiceLinks: false
      {{- with .Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml .Values.podSecurityContext | nindent 8 }}
      # Long enough for in-flight reconciles to drain and the Lease to be released on SIGTERM.
      terminationGracePeriodSeconds: 40
      containers:
        - name: operator
          image: {{ include "homeostat-operator.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          {{- if .Values.jit }}
          # The image's ENTRYPOINT without --jitless (libs/operator-kit's operatorNodeFlags; a
          # chart test keeps the two in step).
          command: ["node", "--max-semi-space-size=1", "--optimize-for-size", "/app/operator.mjs"]
          {{- end }}
          args:
            - --leader-elect={{ .Values.leaderElection.enabled }}
            - --lease-name={{ include "homeostat-operator.leaseName" . }}
            - --health-port=8081
            - --metrics-port=8080
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            - name: WATCH_NAMESPACES
              value: {{ join "," .Values.watchNamespaces | quote }}
            {{- with $env }}
            {{- . | nindent 12 }}
            {{- end }}
            - name: MAX_CONCURRENT_RECONCILES
              value: {{ .Values.maxConcurrentReconciles | quote }}
            - name: LOG_LEVEL
              value: {{ .Values.logLevel | quote }}
          ports:
            - name: metrics
              containerPort: 8080
              protocol: TCP
            - name: health
              containerPort: 8081
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: health
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: health
            periodSeconds: 5
          startupProbe:
            httpGet:
              path: /healthz
              port: health
            periodSeconds: 2
            failureThreshold: 30
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
          securityContext:
            {{- toYaml .Values.securityContext | nindent 12 }}
          {{- with $volumeMounts }}
          volumeMounts:
            {{- . | nindent 12 }}
          {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $volumes }}
      volumes:
        {{- . | nindent 8 }}
      {{- end }}
{{- end }}
{{- end }}
