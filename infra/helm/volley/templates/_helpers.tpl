{{/* Release-scoped name, at most 63 characters (a DNS label). */}}
{{- define "volley.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "volley.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "root" $ "component" "web"). */}}
{{- define "volley.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Image of one component: call with (dict "root" $ "image" .Values.images.web). */}}
{{- define "volley.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{- define "volley.storesSecret" -}}
{{- default (printf "%s-stores" (include "volley.fullname" .)) .Values.stores.existingSecret -}}
{{- end -}}

{{- define "volley.agentSecret" -}}
{{- default (printf "%s-agent" (include "volley.fullname" .)) .Values.agent.existingSecret -}}
{{- end -}}

{{- define "volley.webSecret" -}}
{{- default (printf "%s-web" (include "volley.fullname" .)) .Values.web.authExistingSecret -}}
{{- end -}}

{{- define "volley.secretsSecret" -}}
{{- default (printf "%s-secrets" (include "volley.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/*
A secret the chart generates when none is given, kept across helm upgrade: the given value, else the
one the release's Secret already holds (lookup), else `new` (a random value). Call with
(dict "root" $ "secret" <Secret name> "key" <key> "given" <value> "new" <random value>).
`helm template` and --dry-run cannot look up, so they print a new value each time: GitOps tools that
render with them should be given the value (or an existing Secret) instead.
*/}}
{{- define "volley.keptSecret" -}}
{{- $value := .given -}}
{{- if not $value -}}
{{- $existing := lookup "v1" "Secret" .root.Release.Namespace .secret -}}
{{- $data := default dict $existing.data -}}
{{- if hasKey $data .key -}}
{{- $value = index $data .key | b64dec -}}
{{- else -}}
{{- $value = .new -}}
{{- end -}}
{{- end -}}
{{- $value -}}
{{- end -}}

{{/* The install's mode, checked against what web and hub accept. */}}
{{- define "volley.mode" -}}
{{- if not (has .Values.mode (list "self-hosted" "hosted")) -}}
{{- fail (printf "mode must be self-hosted or hosted, not %q" (toString .Values.mode)) -}}
{{- end -}}
{{- .Values.mode -}}
{{- end -}}

{{/* VOLLEY_MODE and the secrets key for web and hub: both need the same values. */}}
{{- define "volley.modeAndSecretsEnv" -}}
- name: VOLLEY_MODE
  value: {{ include "volley.mode" . | quote }}
- name: VOLLEY_SECRETS_KEY
  valueFrom:
    secretKeyRef: { name: {{ include "volley.secretsSecret" . }}, key: VOLLEY_SECRETS_KEY }
- name: VOLLEY_SECRETS_KEY_OLD
  valueFrom:
    secretKeyRef: { name: {{ include "volley.secretsSecret" . }}, key: VOLLEY_SECRETS_KEY_OLD, optional: true }
{{- end -}}

{{/*
VOLLEY_TARGET_ALLOWLIST and VOLLEY_QUOTA_* for web and hub, from admission.*: web admits the runs it
queues by them and the hub a schedule's runs, so both get them from one value. An unset value is left
out (the apps' built-in default applies); a bad one is refused by the apps at start, naming it.
Naming one in web.extraEnv or hub.extraEnv as well fails, so the two cannot disagree.
*/}}
{{- define "volley.admissionEnv" -}}
{{- range $app := list "web" "hub" }}
{{- range $name := list "VOLLEY_TARGET_ALLOWLIST" "VOLLEY_QUOTA_CONNECTIONS" "VOLLEY_QUOTA_RATE" "VOLLEY_QUOTA_DURATION" }}
{{- if hasKey (index $.Values $app).extraEnv $name }}
{{- fail (printf "%s.extraEnv.%s: set it in admission (targetAllowlist, quotas.*) instead, which gives web and hub the same value" $app $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- $allow := .Values.admission.targetAllowlist }}
{{- if kindIs "slice" $allow }}
{{- $allow = join "," $allow }}
{{- end }}
{{- if $allow }}
- name: VOLLEY_TARGET_ALLOWLIST
  value: {{ $allow | quote }}
{{- end }}
{{- with .Values.admission.quotas }}
{{- if include "volley.given" .connections }}
- name: VOLLEY_QUOTA_CONNECTIONS
  value: {{ include "volley.number" .connections | quote }}
{{- end }}
{{- if include "volley.given" .messagesPerSecond }}
- name: VOLLEY_QUOTA_RATE
  value: {{ include "volley.number" .messagesPerSecond | quote }}
{{- end }}
{{- if include "volley.given" .durationSeconds }}
- name: VOLLEY_QUOTA_DURATION
  value: {{ include "volley.number" .durationSeconds | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* "true" when a value is set: not null and not "" (0 is set, for the app to refuse, naming it). */}}
{{- define "volley.given" -}}
{{- if not (or (kindIs "invalid" .) (eq (toString .) "")) -}}
true
{{- end -}}
{{- end -}}

{{/* A value as the apps read it: YAML numbers arrive as floats, and 1000000 would print as 1e+06. */}}
{{- define "volley.number" -}}
{{- if and (kindIs "float64" .) (eq . (floor .)) -}}
{{- printf "%.0f" . -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{- define "volley.publicUrl" -}}
{{- if .Values.web.publicUrl -}}
{{- .Values.web.publicUrl -}}
{{- else if .Values.web.ingress.enabled -}}
{{- printf "%s://%s" (ternary "https" "http" (not (empty .Values.web.ingress.tlsSecretName))) .Values.web.ingress.host -}}
{{- end -}}
{{- end -}}

{{/* The hub's in-cluster Service URL: where web relays agents (/hub) to. */}}
{{- define "volley.hubServiceUrl" -}}
{{- printf "http://%s-hub:%v" (include "volley.fullname" .) .Values.hub.service.port -}}
{{- end -}}

{{- define "volley.hubUrl" -}}
{{- default (printf "http://%s-hub:%v" (include "volley.fullname" .) .Values.hub.service.port) .Values.agent.hubUrl -}}
{{- end -}}

{{/* Pod-level settings shared by every Deployment. */}}
{{- define "volley.podSpecCommon" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.images.pullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* DATABASE_URL, REDIS_URL and LOG_LEVEL for web and hub. */}}
{{- define "volley.storesEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ include "volley.storesSecret" . }}, key: DATABASE_URL }
- name: REDIS_URL
  valueFrom:
    secretKeyRef: { name: {{ include "volley.storesSecret" . }}, key: REDIS_URL }
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}

{{/* extraEnv map → env list: call with the map. */}}
{{- define "volley.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}
