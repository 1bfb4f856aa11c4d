import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { startOpsServer, type OpsServer } from '../../src/observability/http-server.js';
import { chartDir, chartFile, lookup, renderAlerts, values, valuesPathsRead, valuesSchema } from './chart.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Helm's value merge: maps merge key by key, anything else (lists too) is replaced. */
function merge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObj(v) && isObj(out[k]) ? merge(out[k] as Obj, v) : v;
  return out;
}

/** Leaf paths of values.yaml (an empty map or list is a leaf: the user fills it). */
function leafPaths(obj: Obj, prefix = ''): string[] {
  return Object.entries(obj).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    if (path === 'config') return [path];
    return isObj(v) && Object.keys(v).length > 0 ? leafPaths(v, path) : [path];
  });
}

const examples = readdirSync(join(chartDir, 'examples')).filter((f) => f.endsWith('.yaml'));

describe('helm/orgsync chart (static checks; test/helm/render.test.ts renders it with the real helm)', () => {
  it('Chart.yaml and values.yaml parse', () => {
    const chart = parse(chartFile('Chart.yaml')) as Obj;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'orgsync', type: 'application' });
    expect(String(chart.version)).toMatch(/^\d+\.\d+\.\d+$/);
    const v = values();
    expect(v.mode).toBe('cronjob');
    expect(v.cronjob).toMatchObject({ concurrencyPolicy: 'Forbid' });
    expect(v.persistence).toMatchObject({ enabled: true });
    expect(v.tenants).toEqual([]);
    expect(v.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(v.dashboard).toMatchObject({ labels: { grafana_dashboard: '1' } });
  });

  it('values.schema.json is the generated one (run with ORGSYNC_UPDATE_GENERATED=1 to rewrite it)', () => {
    const generated = `${JSON.stringify(valuesSchema(), null, 2)}\n`;
    if (process.env.ORGSYNC_UPDATE_GENERATED === '1') writeFileSync(join(chartDir, 'values.schema.json'), generated);
    expect(chartFile('values.schema.json')).toBe(generated);
  });

  describe('values.schema.json', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(chartFile('values.schema.json')) as Obj);
    const check = (v: Obj) => (validate(v) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));

    it('accepts values.yaml', () => {
      expect(check(values())).toEqual([]);
    });

    it.each(examples)('accepts examples/%s merged over values.yaml', (file) => {
      expect(check(merge(values(), parse(chartFile(`examples/${file}`)) as Obj))).toEqual([]);
    });

    it.each([
      ['an unknown mode', { mode: 'daemonset' }, '/mode must be equal to one of the allowed values'],
      ['a root container', { securityContext: { runAsNonRoot: false } }, '/securityContext/runAsNonRoot must be equal to constant'],
      ['a misspelt value', { persistance: { enabled: true } }, ' must NOT have additional properties'],
      ['two daemons', { deployment: { replicas: 2 } }, '/deployment/replicas must be <= 1'],
      ['a bad config field', { config: { platform: { base_url: 'https://p.example', bogus: 1 } } }, '/config/platform must NOT have additional properties'],
      ['no time to shut down', { shutdownTimeoutSeconds: 0 }, '/shutdownTimeoutSeconds must be >= 1'],
      ['a tenant without a name', { tenants: [{ schedule: '0 * * * *' }] }, "/tenants/0 must have required property 'name'"],
    ])('rejects %s', (_name, bad, message) => {
      expect(check(merge(values(), bad as Obj))).toContain(message);
    });
  });

  it('every .Values path a template reads exists in values.yaml', () => {
    const v = values();
    const reads = valuesPathsRead();
    expect(reads.length).toBeGreaterThan(40);
    expect(reads.filter(({ path }) => lookup(v, path) === undefined)).toEqual([]);
  });

  it('the chart README lists every value', () => {
    const readme = chartFile('README.md');
    const missing = leafPaths(values()).filter((p) => !readme.includes(`\`${p}\``));
    expect(missing).toEqual([]);
  });

  it('the templates carry the pinned shapes', () => {
    const cron = chartFile('templates/cronjob.yaml');
    expect(cron).toContain('concurrencyPolicy: {{ $.Values.cronjob.concurrencyPolicy }}');
    expect(cron).toContain('{{- range $inst := include "orgsync.instances" . | fromYamlArray }}');
    expect(cron).toContain('"command" "sync"');
    expect(chartFile('templates/deployment.yaml')).toContain('"command" "daemon"');
    expect(chartFile('templates/service.yaml')).toContain('{{- if eq .Values.mode "deployment" }}');
    expect(chartFile('templates/servicemonitor.yaml')).toContain('{{- if and (eq .Values.mode "deployment") .Values.serviceMonitor.enabled }}');
    expect(chartFile('templates/_helpers.tpl')).toContain('emptyDir: {}');
    expect(chartFile('templates/dashboard-configmap.yaml')).toContain('.Files.Get "files/dashboard.json"');
    expect(chartFile('templates/prometheusrule.yaml')).toContain('tpl (.Files.Get "files/alerts.yaml") .');
    expect(chartFile('templates/NOTES.txt').length).toBeGreaterThan(200);
  });

  describe('metric names in the dashboard and the alerts exist on a live /metrics page', () => {
    let server: OpsServer;
    let exported: Set<string>;
    beforeAll(async () => {
      const metrics = new OrgsyncMetrics({ build: { version: 'test' } });
      server = await startOpsServer('127.0.0.1:0', { registry: metrics.registry, readiness: () => ({ ready: true, checks: {} }), status: () => ({}) });
      const text = await (await fetch(`${server.url}/metrics`)).text();
      exported = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!])));
    });
    afterAll(async () => server?.close());

    it('dashboard', () => {
      const dashboard = JSON.parse(chartFile('files/dashboard.json')) as { panels: { title: string; targets: { expr: string }[] }[] };
      const names = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => [...t.expr.matchAll(/\borgsync_[a-z_]+/g)].map((m) => m[0]))));
      expect(names.size).toBeGreaterThan(12);
      expect([...names].filter((n) => !exported.has(n))).toEqual([]);
      const titles = dashboard.panels.map((p) => p.title).join('|');
      for (const t of ['Runs', 'Run duration', 'Operations applied by kind', 'API responses by status', '429s', 'Quarantine', 'Last success age']) expect(titles).toContain(t);
    });

    it('alerts', () => {
      const rules = parse(renderAlerts(values())) as { groups: { rules: { alert: string; expr: string }[] }[] };
      const alerts = rules.groups.flatMap((g) => g.rules);
      expect(alerts.map((a) => a.alert)).toEqual(['OrgsyncSyncFailing', 'OrgsyncNoRecentSuccess', 'OrgsyncDeleteThresholdTripped', 'OrgsyncQuarantineGrowing', 'OrgsyncRateLimitedOften', 'OrgsyncRecordsBlocked', 'OrgsyncApprovalPending']);
      const names = new Set(alerts.flatMap((a) => [...a.expr.matchAll(/\borgsync_[a-z_]+/g)].map((m) => m[0])));
      expect([...names].filter((n) => !exported.has(n))).toEqual([]);
    });
  });
});
