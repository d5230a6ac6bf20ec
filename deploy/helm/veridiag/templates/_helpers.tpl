{{/* Names and labels as `helm create` writes them. */}}
{{- define "veridiag.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "veridiag.fullname" -}}
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

{{- define "veridiag.selectorLabels" -}}
app.kubernetes.io/name: {{ include "veridiag.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "veridiag.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "veridiag.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: veridiag
{{- end }}

{{- define "veridiag.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "veridiag.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "veridiag.secretName" -}}
{{- default (include "veridiag.fullname" .) .Values.existingSecret }}
{{- end }}

{{- define "veridiag.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* veridiag.yaml as the ConfigMap holds it. */}}
{{- define "veridiag.config" -}}
{{- tpl (toYaml .Values.config) . }}
{{- end }}

{{/*
What a combination of values would break is refused: SQLite is one pod's store, a
ReadWriteOnce home one pod's volume, and the queued alert diagnoses need a process to run them.
*/}}
{{- define "veridiag.validate" -}}
{{- $pods := add (int .Values.serve.replicaCount) (ternary (int .Values.worker.replicaCount) 0 .Values.worker.enabled) }}
{{- if and (not .Values.database.postgresql) (gt (int $pods) 1) }}
{{- fail "SQLite (database.postgresql: false) is one pod's store: set serve.replicaCount 1 and worker.enabled false, or use PostgreSQL (values-scaled.yaml)" }}
{{- end }}
{{- if and .Values.persistence.enabled (has "ReadWriteOnce" .Values.persistence.accessModes) (gt (int $pods) 1) }}
{{- fail "a ReadWriteOnce home (persistence) holds one pod: set persistence.enabled false for replicas and workers" }}
{{- end }}
{{- if and (not .Values.worker.enabled) (eq (int (dig "alerts" "serve_workers" 1 .Values.config)) 0) }}
{{- fail "config.alerts.serve_workers is 0 and worker.enabled is false: no process would run the queued alert diagnoses" }}
{{- end }}
{{- if lt (int .Values.serve.replicaCount) 1 }}
{{- fail "serve.replicaCount must be at least 1" }}
{{- end }}
{{- if and .Values.deriveTraces.enabled (not (and (eq (dig "tools" "traces" "" .Values.config) "clickhouse") (dig "clickhouse" "url" "" .Values.config))) }}
{{- fail "deriveTraces derives spans in a ClickHouse server: set config.tools.traces clickhouse and config.clickhouse.url (the in-process engine's data directory is one pod's)" }}
{{- end }}
{{- end }}

{{/* The environment every container reads: the same store and settings everywhere. */}}
{{- define "veridiag.env" -}}
{{- $secret := include "veridiag.secretName" . -}}
env:
  - name: VERIDIAG_CONFIG
    value: /etc/veridiag/veridiag.yaml
  - name: VERIDIAG_HOME
    value: /var/lib/veridiag
  - name: VERIDIAG_API_TOKENS
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: api-tokens}
  - name: VERIDIAG_API_SESSION_SECRET
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: session-secret, optional: true}
  - name: VERIDIAG_LLM__DEFAULT__API_KEY
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: llm-api-key, optional: true}
  - name: VERIDIAG_ALERTS__PAGERDUTY_SECRET
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: pagerduty-secret, optional: true}
  - name: VERIDIAG_ALERTS__GRAFANA_SECRET
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: grafana-secret, optional: true}
  {{- if .Values.database.postgresql }}
  - name: VERIDIAG_DATABASE_URL
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: database-url}
  {{- end }}
  {{- if has "clickhouse" (list (dig "tools" "logs" "" .Values.config) (dig "tools" "traces" "" .Values.config)) }}
  - name: VERIDIAG_CLICKHOUSE__PASSWORD
    valueFrom:
      secretKeyRef: {name: {{ $secret }}, key: clickhouse-password, optional: true}
  {{- end }}
  {{- with .Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
envFrom:
  - secretRef: {name: {{ default (printf "%s-chat" (include "veridiag.fullname" .)) .Values.chat.existingSecret }}, optional: true}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  - {name: home, mountPath: /var/lib/veridiag}
  - {name: tmp, mountPath: /tmp}
  - {name: config, mountPath: /etc/veridiag, readOnly: true}
{{- end }}

{{/*
A pod of veridiag: the store migrated first by an init container, then the one container
given as (dict "root" $ "name" … "args" … "resources" … "extra" …); with "job" true, a job's:
run once (restartPolicy Never), no store to migrate, its home scratch.
*/}}
{{- define "veridiag.podSpec" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "veridiag.serviceAccountName" $root }}
automountServiceAccountToken: false
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: 60
{{- if .job }}
restartPolicy: Never
{{- else }}
initContainers:
  - name: migrate
    image: {{ include "veridiag.image" $root }}
    imagePullPolicy: {{ $root.Values.image.pullPolicy }}
    args: [db, upgrade]
    {{- include "veridiag.env" $root | nindent 4 }}
    resources:
      {{- toYaml $root.Values.migrate.resources | nindent 6 }}
{{- end }}
containers:
  - name: {{ .name }}
    image: {{ include "veridiag.image" $root }}
    imagePullPolicy: {{ $root.Values.image.pullPolicy }}
    args: {{ toJson .args }}
    {{- include "veridiag.env" $root | nindent 4 }}
    {{- with .extra }}
    {{- . | nindent 4 }}
    {{- end }}
    resources:
      {{- toYaml .resources | nindent 6 }}
{{- with $root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: home
    {{- if and $root.Values.persistence.enabled (not .job) }}
    persistentVolumeClaim:
      claimName: {{ default (printf "%s-home" (include "veridiag.fullname" $root)) $root.Values.persistence.existingClaim }}
    {{- else }}
    emptyDir: {}
    {{- end }}
  - name: tmp
    emptyDir: {medium: Memory, sizeLimit: 64Mi}
  - name: config
    configMap: {name: {{ include "veridiag.fullname" $root }}-config}
{{- end }}

{{/* Pod template metadata: a changed veridiag.yaml rolls the pods. */}}
{{- define "veridiag.podMetadata" -}}
{{- $root := .root -}}
annotations:
  checksum/config: {{ include "veridiag.config" $root | sha256sum }}
  {{- with $root.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
labels:
  {{- include "veridiag.labels" $root | nindent 2 }}
  app.kubernetes.io/component: {{ .component }}
  {{- with $root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/*
serve's port and probes. /healthz needs no token; 503 while the store does not answer. The
probes name the host "localhost": the API answers only the Host names it is told
(config.api_allowed_hosts).
*/}}
{{- define "veridiag.serveProbes" -}}
ports:
  - {name: http, containerPort: 8080, protocol: TCP}
startupProbe:
  httpGet: {path: /healthz, port: http, httpHeaders: [{name: Host, value: localhost}]}
  periodSeconds: 5
  failureThreshold: 60
readinessProbe:
  httpGet: {path: /healthz, port: http, httpHeaders: [{name: Host, value: localhost}]}
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /healthz, port: http, httpHeaders: [{name: Host, value: localhost}]}
  periodSeconds: 20
  timeoutSeconds: 5
  failureThreshold: 6
{{- end }}
