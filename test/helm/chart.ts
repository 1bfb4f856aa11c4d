/**
 * What the chart tests share: the chart's files, a reader of values.yaml, the `.Values` paths templates read, and
 * the generator of values.schema.json (hand-written chart values + the config's JSON Schema from the zod schema).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { configJsonSchema } from '../../src/config/json-schema.js';

export const chartDir = resolve(import.meta.dirname, '../../helm/orgsync');

export function chartFile(path: string): string {
  return readFileSync(join(chartDir, path), 'utf8');
}

export function values(): Record<string, unknown> {
  return parse(chartFile('values.yaml')) as Record<string, unknown>;
}

/** Every `.Values.a.b` path read by the templates and by files rendered through `tpl`. */
export function valuesPathsRead(): { file: string; path: string }[] {
  const files = [...readdirSync(join(chartDir, 'templates')).map((f) => `templates/${f}`), 'files/alerts.yaml'];
  const out: { file: string; path: string }[] = [];
  for (const file of files) {
    for (const m of chartFile(file).matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) out.push({ file, path: m[1]!.slice(1) });
  }
  return out;
}

/** Renders files/alerts.yaml the way `tpl` does for its only two forms: .Values references and raw-string literals. */
export function renderAlerts(vals: Record<string, unknown>): string {
  const text = chartFile('files/alerts.yaml')
    .replace(/\{\{`([\s\S]*?)`\}\}/g, (_m, literal: string) => literal.replaceAll('{{', '\u0000').replaceAll('}}', '\u0001'))
    .replace(/\{\{-? *\.Values\.([\w.]+) *-?\}\}/g, (_m, path: string) => String(lookup(vals, path)));
  if (text.includes('{{')) throw new Error('files/alerts.yaml uses a template action the test renderer does not know');
  return text.replaceAll('\u0000', '{{').replaceAll('\u0001', '}}');
}

/** The value at a dotted path, or undefined. */
export function lookup(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(key in (cur as object))) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

const str = (description: string) => ({ type: 'string', description });
const int = (description: string, minimum = 0) => ({ type: 'integer', minimum, description });
const bool = (description: string) => ({ type: 'boolean', description });
const obj = (description: string) => ({ type: 'object', description });
const arr = (description: string) => ({ type: 'array', description });
const strict = (description: string, properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  description,
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
});

/** A copy of a JSON Schema with every `required` and `default` removed (a tenant's config is a partial overlay). */
function withoutRequired(schema: unknown): Record<string, unknown> {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'required' && k !== 'default').map(([k, x]) => [k, strip(x)]));
  };
  return strip(schema) as Record<string, unknown>;
}

/** The chart's values.schema.json, generated; test/helm/chart.test.ts fails when the committed file differs. */
export function valuesSchema(): Record<string, unknown> {
  const config = configJsonSchema({ target: 'draft-7' });
  for (const k of ['$schema', '$id', 'title']) delete config[k];
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'orgsync chart values',
    ...strict(
      'Values of the orgsync chart (see its README).',
      {
        mode: { type: 'string', enum: ['cronjob', 'deployment'], description: 'cronjob: `orgsync sync` per schedule tick; deployment: a long-running `orgsync daemon`.' },
        schedule: { type: 'string', pattern: '^\\S+( \\S+){4,5}$', description: 'Cron schedule of the runs.' },
        timezone: { type: 'string', minLength: 1, description: 'IANA time zone of the schedule.' },
        image: strict(
          'Container image.',
          {
            repository: { type: 'string', minLength: 1 },
            tag: str('Defaults to the chart appVersion.'),
            digest: { type: 'string', pattern: '^(sha256:[a-f0-9]{64})?$', description: 'Pin the image by content (sha256:<64 hex digits>): the pod runs repository@digest.' },
            pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
          },
          ['repository'],
        ),
        imagePullSecrets: arr('Pull secrets.'),
        nameOverride: str('Overrides the chart name.'),
        fullnameOverride: str('Overrides the full name.'),
        config: { ...config, description: 'The orgsync config file (schedule and timezone come from the values above).' },
        tenants: {
          type: 'array',
          description: 'Many tenants from one release: one CronJob (or Deployment), ConfigMap and PVC each, named <release>-<name>. Empty: the single-tenant layout.',
          items: strict(
            'One tenant.',
            {
              name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 52, description: 'Its name: objects are <release>-<name>, labelled orgsync.io/tenant; its sync.id unless config sets one.' },
              config: { ...withoutRequired(config), description: 'Merged over `config` (maps key by key, lists replaced).' },
              existingConfigMap: str('An existing ConfigMap (key orgsync.yaml) instead of its config.'),
              existingSecret: str('Its Secret under /run/secrets/orgsync (default: `existingSecret`).'),
              schedule: { type: 'string', pattern: '^\\S+( \\S+){4,5}$', description: 'Its schedule (default: `schedule`, spread by `spreadMinutes`).' },
              timezone: { type: 'string', minLength: 1, description: 'Its time zone (default: `timezone`).' },
              persistence: obj('Keys that override `persistence` for this tenant.'),
              resources: obj('Replaces `resources` for this tenant.'),
            },
            ['name'],
          ),
        },
        spreadMinutes: { type: 'integer', minimum: 0, maximum: 60, description: 'Tenants: move each tenant\'s minute of `schedule` by adler32(name) mod this (0: no spread).' },
        existingConfigMap: str('An existing ConfigMap (key orgsync.yaml) instead of `config`.'),
        existingSecret: str('An existing Secret mounted under /run/secrets/orgsync.'),
        extraEnv: arr('Extra environment variables.'),
        extraVolumes: arr('Extra volumes.'),
        extraVolumeMounts: arr('Extra volume mounts.'),
        persistence: strict('The state DB volume.', {
          enabled: bool('A PVC; otherwise an emptyDir.'),
          existingClaim: str('Use this claim.'),
          storageClass: str('Storage class of the new claim.'),
          accessModes: { type: 'array', items: { type: 'string', enum: ['ReadWriteOnce', 'ReadWriteOncePod', 'ReadWriteMany', 'ReadOnlyMany'] }, minItems: 1 },
          size: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$' },
        }),
        cronjob: strict('CronJob settings (mode cronjob).', {
          concurrencyPolicy: { type: 'string', enum: ['Forbid', 'Replace', 'Allow'], description: 'Forbid: never two runs at once.' },
          successfulJobsHistoryLimit: int('Finished jobs kept.'),
          failedJobsHistoryLimit: int('Failed jobs kept.'),
          startingDeadlineSeconds: int('Deadline to start a missed run.'),
          backoffLimit: int('Pod retries of one run.'),
          activeDeadlineSeconds: int('Kill a run after this (0: no limit).'),
          suspend: bool('Suspend the schedule.'),
        }),
        deployment: strict('Deployment settings (mode deployment).', { replicas: { type: 'integer', minimum: 0, maximum: 1, description: 'The lease lock allows one active daemon.' } }),
        shutdownTimeoutSeconds: int('Seconds orgsync takes to stop after SIGTERM; the pods\' terminationGracePeriodSeconds is this plus 10.', 1),
        resources: obj('Container resources.'),
        nodeHeapPercent: { type: 'integer', minimum: 0, maximum: 90, description: 'The Node.js heap limit (NODE_OPTIONS=--max-old-space-size) as a percent of resources.limits.memory; 0: Node\'s default (half the limit).' },
        nodeSemiSpaceMiB: { type: 'integer', minimum: 0, maximum: 256, description: 'Each of the Node.js young generation\'s two semi-spaces in MiB (NODE_OPTIONS=--max-semi-space-size); 0: Node\'s default (16).' },
        podSecurityContext: obj('Pod security context.'),
        securityContext: {
          ...obj('Container security context.'),
          properties: { runAsNonRoot: { const: true }, readOnlyRootFilesystem: { type: 'boolean' }, allowPrivilegeEscalation: { type: 'boolean' }, capabilities: { type: 'object' } },
        },
        podAnnotations: obj('Pod annotations.'),
        podLabels: obj('Pod labels.'),
        nodeSelector: obj('Node selector.'),
        tolerations: arr('Tolerations.'),
        affinity: obj('Affinity.'),
        automountServiceAccountToken: bool('Mount a ServiceAccount token into the pods (orgsync never calls the Kubernetes API: default false).'),
        serviceAccount: strict('Service account.', { create: bool('Create one.'), name: str('Its name.'), annotations: obj('Its annotations.') }),
        service: strict('The metrics Service (mode deployment).', {
          type: { type: 'string', enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
          port: { type: 'integer', minimum: 1, maximum: 65535 },
          annotations: obj('Service annotations.'),
        }),
        networkPolicy: strict('A NetworkPolicy per instance (on by default): ingress to the daemon\'s listener only from Prometheus and the POST /sync callers; egress only to DNS and the ports of the configured URLs.', {
          enabled: bool('Create it.'),
          prometheus: { type: 'array', items: { type: 'object' }, description: 'NetworkPolicyPeers of the Prometheus that scrapes /metrics.' },
          ingressFrom: { type: 'array', items: { type: 'object' }, description: 'NetworkPolicyPeers that call POST /sync, GET /runs/<id>, GET /records/<selector>/history (an HR webhook, a CI job).' },
          dns: { type: 'array', items: { type: 'object' }, description: 'NetworkPolicyPeers of the cluster DNS (port 53 UDP and TCP).' },
          egressTo: { type: 'array', items: { type: 'object' }, description: 'NetworkPolicyPeers of the platform and the sources; empty: any address, on the configured ports.' },
          extraEgress: { type: 'array', items: { type: 'object' }, description: 'More NetworkPolicyEgressRules.' },
        }),
        serviceMonitor: strict('Prometheus Operator ServiceMonitor (mode deployment).', {
          enabled: bool('Create it.'),
          interval: { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
          scrapeTimeout: { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
          labels: obj('Extra labels (for the operator\'s selector).'),
          tlsConfig: obj('The endpoint\'s tlsConfig when config.metrics.tls makes the listener HTTPS.'),
        }),
        prometheusRule: strict('Prometheus Operator PrometheusRule with the alerts.', {
          enabled: bool('Create it.'),
          labels: obj('Extra labels.'),
          noSuccessFor: int('Seconds without a success before OrgsyncNoRecentSuccess (twice the interval).', 1),
          failingFor: { type: 'string', pattern: '^[0-9]+(s|m|h)$', description: 'for: of OrgsyncSyncFailing.' },
          quarantineGrowth: int('Records of quarantine growth within an hour tolerated.'),
          rateLimitedThreshold: int('429s within 15 minutes tolerated.'),
          pendingApprovalAfter: int('Seconds a refused plan may wait for approval before OrgsyncApprovalPending.', 1),
        }),
        dashboard: strict('Grafana dashboard ConfigMap.', { enabled: bool('Create it.'), labels: obj('Labels the Grafana sidecar selects on.'), annotations: obj('Annotations (e.g. grafana_folder).') }),
      },
      ['mode', 'schedule', 'image'],
    ),
  };
}
