{{/* Chart name. */}}
{{- define "orgsync.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name of the release's objects. */}}
{{- define "orgsync.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Common labels. */}}
{{- define "orgsync.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "orgsync.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels. */}}
{{- define "orgsync.selectorLabels" -}}
app.kubernetes.io/name: {{ include "orgsync.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Service account name. */}}
{{- define "orgsync.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "orgsync.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Name of the ConfigMap holding orgsync.yaml. */}}
{{- define "orgsync.configMapName" -}}
{{- default (include "orgsync.fullname" .) .Values.existingConfigMap -}}
{{- end -}}

{{/* The pod spec shared by the CronJob and the Deployment. Argument: a dict with "root" and "command". */}}
{{- define "orgsync.podSpec" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "orgsync.serviceAccountName" $root }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
{{- with $root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: orgsync
    image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
    imagePullPolicy: {{ $root.Values.image.pullPolicy }}
    args: [{{ .command | quote }}, "--config", "/etc/orgsync/orgsync.yaml"]
    {{- with $root.Values.extraEnv }}
    env:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    securityContext:
      {{- toYaml $root.Values.securityContext | nindent 6 }}
    resources:
      {{- toYaml $root.Values.resources | nindent 6 }}
    {{- if eq .command "daemon" }}
    ports:
      - name: metrics
        containerPort: {{ $root.Values.service.port }}
        protocol: TCP
    livenessProbe:
      httpGet: { path: /healthz, port: metrics }
      periodSeconds: 20
      failureThreshold: 3
    readinessProbe:
      httpGet: { path: /readyz, port: metrics }
      periodSeconds: 15
    {{- end }}
    volumeMounts:
      - { name: config, mountPath: /etc/orgsync/orgsync.yaml, subPath: orgsync.yaml, readOnly: true }
      - { name: state, mountPath: /var/lib/orgsync }
      - { name: tmp, mountPath: /tmp }
      {{- if $root.Values.existingSecret }}
      - { name: secrets, mountPath: /run/secrets/orgsync, readOnly: true }
      {{- end }}
      {{- with $root.Values.extraVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
volumes:
  - name: config
    configMap:
      name: {{ include "orgsync.configMapName" $root }}
  - name: state
    {{- if $root.Values.persistence.enabled }}
    persistentVolumeClaim:
      claimName: {{ $root.Values.persistence.existingClaim | default (include "orgsync.fullname" $root) }}
    {{- else }}
    emptyDir: {}
    {{- end }}
  - name: tmp
    emptyDir: {}
  {{- if $root.Values.existingSecret }}
  - name: secrets
    secret:
      secretName: {{ $root.Values.existingSecret }}
      defaultMode: 0400
  {{- end }}
  {{- with $root.Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}
