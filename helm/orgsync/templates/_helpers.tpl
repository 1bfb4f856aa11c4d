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

{{/*
The instances the release runs, as a YAML list: one per entry of `tenants`, or the release itself when `tenants` is
empty (today's single-tenant layout, objects named by "orgsync.fullname"). Each entry:
  name               object name of its CronJob/Deployment, ConfigMap, PVC and Service (`<release>-<tenant>`)
  tenant             the tenant's name, or "" for the single-tenant layout (then no orgsync.io/tenant label)
  config             the rendered orgsync.yaml (tenant config merged over `config`, schedule and timezone set)
  configMap          the ConfigMap its pod mounts (existingConfigMap, or `name`)
  renderConfigMap    true when the chart renders that ConfigMap
  existingSecret     the Secret mounted under /run/secrets/orgsync ("" for none)
  schedule timezone persistence resources
*/}}
{{- define "orgsync.instances" -}}
{{- $root := . -}}
{{- $out := list -}}
{{- if not .Values.tenants -}}
{{- $name := include "orgsync.fullname" . -}}
{{- $config := merge (dict "schedule" .Values.schedule "timezone" .Values.timezone "shutdown_timeout" (printf "%ds" (int .Values.shutdownTimeoutSeconds))) (deepCopy .Values.config) -}}
{{- include "orgsync.modeDefaults" (dict "root" . "config" $config) -}}
{{- $out = append $out (dict "name" $name "tenant" "" "config" $config "configMap" (.Values.existingConfigMap | default $name) "renderConfigMap" (not .Values.existingConfigMap) "existingSecret" .Values.existingSecret "schedule" .Values.schedule "timezone" .Values.timezone "persistence" .Values.persistence "resources" .Values.resources) -}}
{{- else -}}
{{- $seen := dict -}}
{{- range $t := .Values.tenants -}}
{{- if hasKey $seen $t.name -}}
{{- fail (printf "tenants: the name %q is given twice; each tenant needs its own name (its objects are named %s-<name>)" $t.name $root.Release.Name) -}}
{{- end -}}
{{- $_ := set $seen $t.name true -}}
{{- $dashboardName := printf "%s-dashboard" (include "orgsync.fullname" $root) -}}
{{- if and $root.Values.dashboard.enabled (eq (printf "%s-%s" $root.Release.Name $t.name) $dashboardName) -}}
{{- fail (printf "tenants: the name %q would name its ConfigMap %s, the dashboard's; rename the tenant" $t.name $dashboardName) -}}
{{- end -}}
{{- $name := printf "%s-%s" $root.Release.Name $t.name -}}
{{- if and (eq $root.Values.mode "cronjob") (gt (len $name) 52) -}}
{{- fail (printf "tenants: %q is %d characters; a CronJob name (<release>-<tenant>) may have at most 52: shorten the tenant's name or the release's" $name (len $name)) -}}
{{- else if gt (len $name) 63 -}}
{{- fail (printf "tenants: %q is %d characters; object names (<release>-<tenant>) may have at most 63: shorten the tenant's name or the release's" $name (len $name)) -}}
{{- end -}}
{{- $schedule := $t.schedule | default (include "orgsync.spreadSchedule" (dict "schedule" $root.Values.schedule "name" $t.name "spread" $root.Values.spreadMinutes)) -}}
{{- $timezone := $t.timezone | default $root.Values.timezone -}}
{{- $tenantConfig := $t.config | default dict -}}
{{- $config := include "orgsync.deepMerge" (dict "base" $root.Values.config "over" $tenantConfig) | fromYaml -}}
{{- $sync := get $config "sync" | default dict -}}
{{- $_ := set $sync "id" (dig "sync" "id" $t.name $tenantConfig) -}}
{{- $_ := set $config "sync" $sync -}}
{{- $_ := set $config "schedule" $schedule -}}
{{- $_ := set $config "timezone" $timezone -}}
{{- $_ := set $config "shutdown_timeout" (printf "%ds" (int $root.Values.shutdownTimeoutSeconds)) -}}
{{- include "orgsync.modeDefaults" (dict "root" $root "config" $config) -}}
{{- $persistence := deepCopy $root.Values.persistence -}}
{{- range $k, $v := ($t.persistence | default dict) -}}
{{- $_ := set $persistence $k $v -}}
{{- end -}}
{{- $out = append $out (dict "name" $name "tenant" $t.name "config" $config "configMap" ($t.existingConfigMap | default $name) "renderConfigMap" (not $t.existingConfigMap) "existingSecret" ($t.existingSecret | default $root.Values.existingSecret) "schedule" $schedule "timezone" $timezone "persistence" $persistence "resources" ($t.resources | default $root.Values.resources)) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* Maps merged key by key (recursively); anything else, lists too, replaced. Argument: dict "base" "over". YAML. */}}
{{- define "orgsync.deepMerge" -}}
{{- $out := deepCopy .base -}}
{{- range $k, $v := .over -}}
{{- if and (kindIs "map" $v) (kindIs "map" (get $out $k)) -}}
{{- $_ := set $out $k (include "orgsync.deepMerge" (dict "base" (get $out $k) "over" $v) | fromYaml) -}}
{{- else -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
A tenant's schedule under `spreadMinutes`: the minute of the release's schedule moved by
adler32(tenant name) mod spreadMinutes, so that many tenants do not all start at once. A plain minute `M` becomes
(M + offset) mod 60; a step of S minutes (star, slash, S) becomes `(offset mod S)-59/S`. Other minute fields (`*`, lists, ranges) and
6-field schedules are left as they are. Argument: dict "schedule" "name" "spread".
*/}}
{{- define "orgsync.spreadSchedule" -}}
{{- $fields := splitList " " .schedule -}}
{{- $spread := int .spread -}}
{{- if or (le $spread 0) (ne (len $fields) 5) -}}
{{- .schedule -}}
{{- else -}}
{{- $offset := mod (atoi (adler32sum .name)) $spread -}}
{{- $minute := first $fields -}}
{{- if regexMatch "^[0-9]+$" $minute -}}
{{- printf "%d %s" (mod (add (atoi $minute) $offset) 60) (join " " (rest $fields)) -}}
{{- else if regexMatch "^\\*/[0-9]+$" $minute -}}
{{- $step := atoi (trimPrefix "*/" $minute) -}}
{{- printf "%d-59/%d %s" (mod $offset $step) $step (join " " (rest $fields)) -}}
{{- else -}}
{{- .schedule -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of one instance's objects: the common labels, plus orgsync.io/tenant for a tenant. Argument: dict "root" "inst". */}}
{{- define "orgsync.instanceLabels" -}}
{{ include "orgsync.labels" .root }}
{{- if .inst.tenant }}
orgsync.io/tenant: {{ .inst.tenant | quote }}
{{- end }}
{{- end -}}

{{/* Selector labels of one instance's pods. Argument: dict "root" "inst". */}}
{{- define "orgsync.instanceSelectorLabels" -}}
{{ include "orgsync.selectorLabels" .root }}
{{- if .inst.tenant }}
orgsync.io/tenant: {{ .inst.tenant | quote }}
{{- end }}
{{- end -}}

{{/* The pod template's metadata (labels and the config checksum). Argument: dict "root" "inst". */}}
{{- define "orgsync.podMetadata" -}}
labels:
  {{- include "orgsync.instanceSelectorLabels" . | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  {{- if .inst.renderConfigMap }}
  {{- /* The ConfigMap's orgsync.yaml is exactly this text: a config change rolls the pods. */}}
  checksum/config: {{ toYaml .inst.config | sha256sum }}
  {{- end }}
  {{- with .root.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/*
The V8 heap limit in MiB for an instance: nodeHeapPercent of its resources.limits.memory (Ki, Mi, Gi, Ti, k, M, G, T or
bytes), or nothing without a limit or with nodeHeapPercent 0. Argument: dict "root" "inst".
*/}}
{{- define "orgsync.heapMiB" -}}
{{- $pct := int (.root.Values.nodeHeapPercent | default 0) -}}
{{- $limit := "" -}}
{{- with .inst.resources }}{{ with .limits }}{{ $limit = toString (.memory | default "") }}{{ end }}{{ end -}}
{{- if and $limit (gt $pct 0) -}}
{{- $units := dict "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 -}}
{{- $number := regexFind "^[0-9.]+" $limit -}}
{{- $unit := trimPrefix $number $limit -}}
{{- if or (not $number) (and $unit (not (hasKey $units $unit))) -}}
{{- fail (printf "resources.limits.memory %q: use a quantity such as 512Mi or 1Gi (nodeHeapPercent sizes the Node.js heap from it)" $limit) -}}
{{- end -}}
{{- $bytes := mulf (float64 $number) (get $units $unit | default 1.0) -}}
{{- floor (divf (mulf $bytes $pct) 104857600.0) | int -}}
{{- end -}}
{{- end -}}

{{/*
The Node.js options of an instance: --max-old-space-size from orgsync.heapMiB and --max-semi-space-size from
nodeSemiSpaceMiB, space-separated; empty when both are off. Argument: dict "root" "inst".
*/}}
{{- define "orgsync.nodeOptions" -}}
{{- $options := list -}}
{{- with include "orgsync.heapMiB" . }}{{ $options = append $options (printf "--max-old-space-size=%s" .) }}{{ end -}}
{{- with int (.root.Values.nodeSemiSpaceMiB | default 0) }}{{ $options = append $options (printf "--max-semi-space-size=%d" .) }}{{ end -}}
{{- join " " $options -}}
{{- end -}}

{{/* The pod spec shared by the CronJob and the Deployment. Argument: a dict with "root", "inst" and "command". */}}
{{- define "orgsync.podSpec" -}}
{{- $root := .root -}}
{{- $inst := .inst -}}
serviceAccountName: {{ include "orgsync.serviceAccountName" $root }}
{{- /* orgsync never calls the Kubernetes API: no token in the pod, whichever ServiceAccount it runs as (issue 44). */}}
automountServiceAccountToken: {{ $root.Values.automountServiceAccountToken }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
{{- /* orgsync's own shutdown (stop scheduling, finish in-flight writes) plus 10 s to exit. */}}
terminationGracePeriodSeconds: {{ add $root.Values.shutdownTimeoutSeconds 10 }}
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
    image: {{ include "orgsync.image" $root | quote }}
    imagePullPolicy: {{ $root.Values.image.pullPolicy }}
    args: [{{ .command | quote }}, "--config", "/etc/orgsync/orgsync.yaml"]
    {{- $userNodeOptions := false }}
    {{- range $root.Values.extraEnv }}{{ if eq .name "NODE_OPTIONS" }}{{ $userNodeOptions = true }}{{ end }}{{ end }}
    env:
      {{- if not $userNodeOptions }}
      {{- /* Node sizes its heap to half the container's limit (a million-member plan failed "heap out of memory" at
      640Mi) and its young generation to 32 MiB. Always set, even empty: it replaces the image's NODE_OPTIONS. */}}
      - name: NODE_OPTIONS
        value: {{ include "orgsync.nodeOptions" (dict "root" $root "inst" $inst) | quote }}
      {{- end }}
      {{- with $root.Values.extraEnv }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    securityContext:
      {{- toYaml $root.Values.securityContext | nindent 6 }}
    resources:
      {{- toYaml $inst.resources | nindent 6 }}
    {{- if eq .command "daemon" }}
    ports:
      - name: metrics
        containerPort: {{ $root.Values.service.port }}
        protocol: TCP
    {{- /* With config.metrics.tls the listener speaks only HTTPS: so must the probes (the kubelet does not verify). */}}
    {{- $scheme := include "orgsync.listenerScheme" $inst.config }}
    livenessProbe:
      httpGet: { path: /healthz, port: metrics, scheme: {{ $scheme }} }
      periodSeconds: 20
      failureThreshold: 3
    readinessProbe:
      httpGet: { path: /readyz, port: metrics, scheme: {{ $scheme }} }
      periodSeconds: 15
    {{- end }}
    volumeMounts:
      - { name: config, mountPath: /etc/orgsync/orgsync.yaml, subPath: orgsync.yaml, readOnly: true }
      - { name: state, mountPath: /var/lib/orgsync }
      - { name: tmp, mountPath: /tmp }
      {{- if $inst.existingSecret }}
      - { name: secrets, mountPath: /run/secrets/orgsync, readOnly: true }
      {{- end }}
      {{- with $root.Values.extraVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
volumes:
  - name: config
    configMap:
      name: {{ $inst.configMap }}
  - name: state
    {{- if $inst.persistence.enabled }}
    persistentVolumeClaim:
      claimName: {{ $inst.persistence.existingClaim | default $inst.name }}
    {{- else }}
    emptyDir: {}
    {{- end }}
  - name: tmp
    emptyDir: {}
  {{- if $inst.existingSecret }}
  - name: secrets
    secret:
      secretName: {{ $inst.existingSecret }}
      defaultMode: 0400
  {{- end }}
  {{- with $root.Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/*
Config defaults of the mode, set in a rendered config only where the config leaves them out. Arguments: dict "root"
"config" (changed in place). CronJob mode: sync.exit_code_on_quarantine 0, so a record HR has to fix does not fail
every Job until it is fixed (the quarantine keeps its metric and alert); failed writes still exit 4.
*/}}
{{- define "orgsync.modeDefaults" -}}
{{- if eq .root.Values.mode "cronjob" -}}
{{- $sync := get .config "sync" | default dict -}}
{{- if not (hasKey $sync "exit_code_on_quarantine") -}}
{{- $_ := set $sync "exit_code_on_quarantine" 0 -}}
{{- end -}}
{{- $_ := set .config "sync" $sync -}}
{{- end -}}
{{- end -}}

{{/*
The TCP ports orgsync reaches from an instance's config (issue 44): the port of every URL it names (the platform,
each source's URLs and token endpoint, webhooks, the Pushgateway), or the scheme's default (https 443, http 80,
ldaps 636, ldap 389); 443 for a preset or a Google service account whose URLs the config leaves to orgsync. A
sorted YAML list of numbers. Argument: the config (a dict).
*/}}
{{- define "orgsync.egressPorts" -}}
{{- $urls := list (dig "platform" "base_url" "" .) (dig "metrics" "pushgateway_url" "" .) -}}
{{- range (dig "notify" "webhooks" list .) }}{{ $urls = append $urls (.url | default "") }}{{ end -}}
{{- range $src := (.sources | default list) -}}
{{- $urls = concat $urls (list ($src.url | default "") ($src.base_url | default "") (dig "auth" "token_url" "" $src)) -}}
{{- if or $src.preset (eq (dig "auth" "type" "" $src) "google-service-account") }}{{ $urls = append $urls "https://preset" }}{{ end -}}
{{- range $entity := list "departments" "positions" "members" -}}
{{- $e := get $src $entity -}}
{{- if kindIs "map" $e }}{{ $urls = concat $urls (list ($e.url | default "") (dig "delta" "url" "" $e)) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $defaults := dict "https" 443 "http" 80 "ldaps" 636 "ldap" 389 -}}
{{- $ports := dict -}}
{{- range $u := $urls -}}
{{- if $u -}}
{{- $parsed := urlParse $u -}}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $parsed.host) -}}
{{- $port = $port | default (toString (get $defaults $parsed.scheme | default "")) -}}
{{- if $port }}{{ $_ := set $ports (printf "%05d" (int $port)) (int $port) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $out := list -}}
{{- range $k := keys $ports | sortAlpha }}{{ $out = append $out (get $ports $k) }}{{ end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* The scheme of the daemon's listener: HTTPS with config.metrics.tls, else HTTP. Argument: the config. */}}
{{- define "orgsync.listenerScheme" -}}
{{- if dig "metrics" "tls" "" . }}HTTPS{{ else }}HTTP{{ end -}}
{{- end -}}

{{/*
The container image: repository@digest when image.digest is set (the image pinned by content, issue 44; a tag given
beside it is kept for readers: repository:tag@digest), else repository:tag (tag: the chart's appVersion by default).
*/}}
{{- define "orgsync.image" -}}
{{- $img := .Values.image -}}
{{- if $img.digest -}}
{{- if $img.tag }}{{ printf "%s:%s@%s" $img.repository $img.tag $img.digest }}{{ else }}{{ printf "%s@%s" $img.repository $img.digest }}{{ end -}}
{{- else -}}
{{- printf "%s:%s" $img.repository ($img.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}
