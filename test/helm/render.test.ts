/**
 * The chart rendered by the real helm v4 (tools/helm.sh): `helm lint --strict` and `helm template` over a matrix of
 * values, every object validated against the Kubernetes (and Prometheus Operator) API schema of its kind with
 * unknown fields rejected, every rendered orgsync.yaml validated by orgsync's own config schema, and assertions on
 * what keeps a production install safe.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { isSecretKey } from '../../src/config/load.js';
import { chartDir, chartFile, renderAlerts, values as chartValues } from './chart.js';
import { helm, helmBin, template, type K8sObject, type Rendered } from './helm.js';
import { schemaProblems } from './k8s-schema.js';

type Obj = Record<string, unknown>;
const bin = helmBin();

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered objects are walked by path */
type Any = any;

function ok(r: Rendered): K8sObject[] {
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return r.objects;
}
const ofKind = (objects: K8sObject[], kind: string): Any[] => objects.filter((o) => o.kind === kind);
const one = (objects: K8sObject[], kind: string): Any => {
  const found = ofKind(objects, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, got ${found.length}`);
  return found[0];
};
const podSpec = (workload: Any): Any => (workload.kind === 'CronJob' ? workload.spec.jobTemplate.spec.template.spec : workload.spec.template.spec);
const podMeta = (workload: Any): Any => (workload.kind === 'CronJob' ? workload.spec.jobTemplate.spec.template.metadata : workload.spec.template.metadata);
const mounts = (workload: Any): Any[] => podSpec(workload).containers[0].volumeMounts;
const volume = (workload: Any, name: string): Any => podSpec(workload).volumes.find((v: Any) => v.name === name);

/** Every schema problem of the objects, plus every rendered orgsync.yaml that orgsync's config schema refuses. */
async function problems(objects: K8sObject[]): Promise<string[]> {
  const out: string[] = [];
  for (const o of objects) out.push(...(await schemaProblems(o)));
  for (const cm of ofKind(objects, 'ConfigMap')) {
    const text = cm.data?.['orgsync.yaml'];
    if (text === undefined) continue;
    const r = configSchema.safeParse(withFileSecrets(parse(text)));
    if (!r.success) out.push(`ConfigMap/${cm.metadata.name}: orgsync.yaml: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return out;
}

/**
 * A config as orgsync validates it: orgsync reads each secret's `<key>_file` into `<key>` before its schema applies
 * (the files are Secret mounts that exist only in the pod), so here each becomes `<key>` with a stand-in value; other
 * `_file` keys (`daemon.trigger_token_file`, a CSV's `file`) are settings and stay.
 */
function withFileSecrets(node: unknown, path: (string | number)[] = []): unknown {
  if (Array.isArray(node)) return node.map((v, i) => withFileSecrets(v, [...path, i]));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => (k.endsWith('_file') && isSecretKey(path, k.slice(0, -5)) && typeof v === 'string' ? [k.slice(0, -5), 'from-a-secret-file'] : [k, withFileSecrets(v, [...path, k])])),
  );
}

/** adler32 of a string's UTF-8 bytes (what the chart's spreadMinutes uses through sprig's adler32sum). */
function adler32(text: string): number {
  let a = 1;
  let b = 0;
  for (const byte of Buffer.from(text, 'utf8')) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return b * 65536 + a;
}

/** The values matrix: each case is rendered, linted and schema-validated. */
const matrix: [string, Obj][] = [
  ['default (CronJob)', {}],
  ['Deployment with ServiceMonitor, PrometheusRule and dashboard', { mode: 'deployment', serviceMonitor: { enabled: true, labels: { release: 'kps' } }, prometheusRule: { enabled: true }, dashboard: { enabled: true } }],
  ['CronJob pushing to a Pushgateway', { config: { metrics: { pushgateway_url: 'http://prometheus-pushgateway.monitoring:9091' } }, prometheusRule: { enabled: true } }],
  ['existingSecret and existingConfigMap', { existingSecret: 'orgsync-secrets', existingConfigMap: 'orgsync-config' }],
  ['persistence off', { persistence: { enabled: false } }],
  ['existing claim', { persistence: { existingClaim: 'orgsync-state' } }],
  [
    'multi-tenant CronJobs',
    {
      existingSecret: 'shared-secrets',
      tenants: [
        { name: 'acme' },
        { name: 'globex', config: { sync: { id: 'globex-hr' }, platform: { base_url: 'https://globex.platform.example' } }, existingSecret: 'globex-secrets', schedule: '15 2 * * *', timezone: 'Europe/Berlin', persistence: { size: '5Gi' }, resources: { requests: { cpu: '50m', memory: '1Gi' }, limits: { memory: '2Gi' } } },
        { name: 'initech', existingConfigMap: 'initech-config', persistence: { existingClaim: 'initech-state' } },
      ],
    },
  ],
  [
    'Deployment with a NetworkPolicy for Prometheus and the POST /sync callers',
    { mode: 'deployment', networkPolicy: { enabled: true, ingressFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'hr-integration' } } }, { ipBlock: { cidr: '10.20.0.0/16' } }] } },
  ],
  ['multi-tenant Deployments with NetworkPolicies', { mode: 'deployment', networkPolicy: { enabled: true, prometheus: [], ingressFrom: [{ podSelector: { matchLabels: { app: 'hr-webhook-relay' } } }] }, tenants: [{ name: 'acme' }, { name: 'globex' }] }],
  ['multi-tenant Deployments with ServiceMonitor', { mode: 'deployment', serviceMonitor: { enabled: true }, dashboard: { enabled: true }, prometheusRule: { enabled: true }, tenants: [{ name: 'acme' }, { name: 'globex', persistence: { enabled: false } }] }],
];

describe.skipIf(!bin)('helm/orgsync rendered by the real helm', () => {
  describe.each(matrix)('%s', (_name, values) => {
    it('passes helm lint --strict', () => {
      const r = helm(bin!, ['lint', '--strict', chartDir, ...setFile(values)]);
      expect(r.stderr + r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.status).toBe(0);
    });

    it('renders objects valid against their Kubernetes API schema (unknown fields rejected) and configs orgsync accepts', async () => {
      const objects = ok(template(bin!, { values: [values] }));
      expect(objects.length).toBeGreaterThanOrEqual(3);
      expect(await problems(objects)).toEqual([]);
    });
  });

  it('the schema check can fail: an unknown field and a wrong type are reported by path', async () => {
    const cron = one(ok(template(bin!)), 'CronJob');
    cron.spec.jobTemplate.spec.template.spec.containers[0].readOnlyRootFS = true;
    cron.spec.concurrencyPolicy = 7;
    const found = await problems([cron]);
    expect(found).toContain('CronJob/orgsync: unknown field spec.jobTemplate.spec.template.spec.containers[0].readOnlyRootFS');
    expect(found.join('\n')).toContain('concurrencyPolicy must be string');
  });

  describe('the default install', () => {
    const objects = bin ? ok(template(bin!)) : [];

    it('is a CronJob with its ConfigMap, ServiceAccount and a PersistentVolumeClaim for the state DB, kept on uninstall', () => {
      expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(['ConfigMap/orgsync', 'CronJob/orgsync', 'NetworkPolicy/orgsync', 'PersistentVolumeClaim/orgsync', 'ServiceAccount/orgsync']);
      const pvc = one(objects, 'PersistentVolumeClaim');
      expect(pvc.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
      expect(pvc.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
      const cron = one(objects, 'CronJob');
      expect(volume(cron, 'state')).toEqual({ name: 'state', persistentVolumeClaim: { claimName: 'orgsync' } });
      expect(mounts(cron)).toContainEqual({ name: 'state', mountPath: '/var/lib/orgsync' });
      const config = parse(one(objects, 'ConfigMap').data['orgsync.yaml']) as Any;
      expect(config.state.path.startsWith('/var/lib/orgsync/')).toBe(true);
    });

    it('never runs two syncs at once, as non-root on a read-only root filesystem with every capability dropped and a memory limit', () => {
      const cron = one(objects, 'CronJob');
      expect(cron.spec.concurrencyPolicy).toBe('Forbid');
      expect(cron.spec.jobTemplate.spec.backoffLimit).toBe(0);
      const pod = podSpec(cron);
      expect(pod.restartPolicy).toBe('Never');
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
      const c = pod.containers[0];
      expect(c.securityContext).toEqual({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(c.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } });
      expect(c.args).toEqual(['sync', '--config', '/etc/orgsync/orgsync.yaml']);
      // The root filesystem is read-only: everything orgsync writes is on a volume.
      expect(mounts(cron).map((m: Any) => m.mountPath).sort()).toEqual(['/etc/orgsync/orgsync.yaml', '/tmp', '/var/lib/orgsync']);
      // Issue 44: on the pod itself, so that no ServiceAccount (the chart's or another) mounts a token.
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(one(objects, 'ServiceAccount').automountServiceAccountToken).toBe(false);
    });

    it('gives the pod shutdownTimeoutSeconds + 10 s to stop (default 20 + 10)', () => {
      expect(podSpec(one(objects, 'CronJob')).terminationGracePeriodSeconds).toBe(30);
      const longer = one(ok(template(bin!, { values: [{ shutdownTimeoutSeconds: 45 }] })), 'CronJob');
      expect(podSpec(longer).terminationGracePeriodSeconds).toBe(55);
      // orgsync itself aborts what is in flight at shutdown_timeout, which the chart writes into its orgsync.yaml.
      expect(parse(one(objects, 'ConfigMap').data['orgsync.yaml'] as string)).toMatchObject({ shutdown_timeout: '20s' });
    });

    it('annotates the pod with the checksum of the orgsync.yaml it mounts, so a config change rolls it', () => {
      const data = one(objects, 'ConfigMap').data['orgsync.yaml'] as string;
      const sum = podMeta(one(objects, 'CronJob')).annotations['checksum/config'];
      expect(sum).toBe(createHash('sha256').update(data.replace(/\n$/, '')).digest('hex'));
      const changed = ok(template(bin!, { values: [{ config: { log: { level: 'debug' } } }] }));
      expect(podMeta(one(changed, 'CronJob')).annotations['checksum/config']).not.toBe(sum);
    });
  });

  it('sizes the Node.js heap from the memory limit (nodeHeapPercent of it) and its young generation (nodeSemiSpaceMiB), since Node on its own takes half the limit (a million-member plan ran out of heap at 640Mi) and 32 MiB of young generation', () => {
    const env = (objects: K8sObject[], kind = 'CronJob'): Any[] | undefined => podSpec(one(objects, kind)).containers[0].env;
    const young = '--max-semi-space-size=4';
    expect(env(ok(template(bin!)))).toEqual([{ name: 'NODE_OPTIONS', value: `--max-old-space-size=384 ${young}` }]);
    expect(env(ok(template(bin!, { values: [{ resources: { limits: { memory: '640Mi' } } }] })))).toEqual([{ name: 'NODE_OPTIONS', value: `--max-old-space-size=480 ${young}` }]);
    expect(env(ok(template(bin!, { values: [{ mode: 'deployment', resources: { limits: { memory: '1.5Gi' } } }] })), 'Deployment')).toEqual([{ name: 'NODE_OPTIONS', value: `--max-old-space-size=1152 ${young}` }]);
    // Decimal units: 1G is 953.67 MiB, three quarters 715.
    expect(env(ok(template(bin!, { values: [{ resources: { limits: { memory: '1G' } }, nodeHeapPercent: 75, nodeSemiSpaceMiB: 8 }] })))).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=715 --max-semi-space-size=8' }]);
    // The operator's own NODE_OPTIONS wins; extraEnv follows ours otherwise.
    const own = [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' }, { name: 'TZ', value: 'UTC' }];
    expect(env(ok(template(bin!, { values: [{ extraEnv: own }] })))).toEqual(own);
    expect(env(ok(template(bin!, { values: [{ extraEnv: [{ name: 'TZ', value: 'UTC' }] }] })))).toEqual([{ name: 'NODE_OPTIONS', value: `--max-old-space-size=384 ${young}` }, { name: 'TZ', value: 'UTC' }]);
    // Each off on its own; both off (or no limit and no young generation): an empty NODE_OPTIONS, which replaces the image's.
    expect(env(ok(template(bin!, { values: [{ nodeHeapPercent: 0 }] })))).toEqual([{ name: 'NODE_OPTIONS', value: young }]);
    expect(env(ok(template(bin!, { values: [{ nodeSemiSpaceMiB: 0 }] })))).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }]);
    expect(env(ok(template(bin!, { values: [{ nodeHeapPercent: 0, nodeSemiSpaceMiB: 0 }] })))).toEqual([{ name: 'NODE_OPTIONS', value: '' }]);
    expect(env(ok(template(bin!, { values: [{ resources: { requests: { memory: '256Mi' }, limits: null }, nodeSemiSpaceMiB: 0 }] })))).toEqual([{ name: 'NODE_OPTIONS', value: '' }]);
    const bad = template(bin!, { values: [{ resources: { limits: { memory: 'lots' } } }] });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('resources.limits.memory "lots": use a quantity such as 512Mi or 1Gi (nodeHeapPercent sizes the Node.js heap from it)');
  });

  it('mounts existingSecret read-only at the folder api_key_file points into', () => {
    const objects = ok(template(bin!, { values: [{ existingSecret: 'orgsync-secrets' }] }));
    const config = parse(one(objects, 'ConfigMap').data['orgsync.yaml']) as Any;
    const keyFile: string = config.platform.api_key_file;
    const cron = one(objects, 'CronJob');
    const mount = mounts(cron).find((m: Any) => m.name === 'secrets');
    expect(mount).toEqual({ name: 'secrets', mountPath: '/run/secrets/orgsync', readOnly: true });
    expect(keyFile).toBe(`${mount.mountPath}/api-key`);
    expect(volume(cron, 'secrets')).toEqual({ name: 'secrets', secret: { secretName: 'orgsync-secrets', defaultMode: 0o400 } });
  });

  it('uses existingConfigMap instead of rendering one (no checksum of a config it did not render)', () => {
    const objects = ok(template(bin!, { values: [{ existingConfigMap: 'orgsync-config' }] }));
    expect(ofKind(objects, 'ConfigMap')).toEqual([]);
    const cron = one(objects, 'CronJob');
    expect(volume(cron, 'config')).toEqual({ name: 'config', configMap: { name: 'orgsync-config' } });
    expect(podMeta(cron).annotations?.['checksum/config']).toBeUndefined();
  });

  it('with persistence off: an emptyDir, no PVC, and NOTES.txt warns loudly', () => {
    const values = { persistence: { enabled: false } };
    const objects = ok(template(bin!, { values: [values] }));
    expect(ofKind(objects, 'PersistentVolumeClaim')).toEqual([]);
    expect(volume(one(objects, 'CronJob'), 'state')).toEqual({ name: 'state', emptyDir: {} });
    const notes = helm(bin!, ['install', 'orgsync', chartDir, '--dry-run=client', '--namespace', 'hr', ...setFile(values)]);
    expect(notes.status).toBe(0);
    expect(notes.stdout).toContain('WARNING: orgsync: persistence is OFF. Its state DB lives in an emptyDir and is LOST with every pod:');
    expect(notes.stdout).toContain('leavers and changed members are NOT applied');
    const quiet = helm(bin!, ['install', 'orgsync', chartDir, '--dry-run=client', '--namespace', 'hr']);
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).toContain('NOTES:');
    expect(quiet.stdout).not.toContain('persistence is OFF');
  });

  it('CronJob mode sets sync.exit_code_on_quarantine 0 unless the config sets it; Deployment mode leaves it alone (issue 15)', () => {
    const config = (objects: K8sObject[]): Any => parse(one(objects, 'ConfigMap').data['orgsync.yaml']);
    expect(config(ok(template(bin!))).sync).toMatchObject({ id: 'orgsync', exit_code_on_quarantine: 0 });
    expect(config(ok(template(bin!, { values: [{ config: { sync: { exit_code_on_quarantine: 4 } } }] }))).sync.exit_code_on_quarantine).toBe(4);
    expect(config(ok(template(bin!, { values: [{ mode: 'deployment' }] }))).sync).not.toHaveProperty('exit_code_on_quarantine');
    const tenants = ok(template(bin!, { values: [{ tenants: [{ name: 'acme' }, { name: 'globex', config: { sync: { exit_code_on_quarantine: 4 } } }] }] }));
    expect(ofKind(tenants, 'ConfigMap').map((c) => parse(c.data['orgsync.yaml']).sync)).toEqual([
      expect.objectContaining({ id: 'acme', exit_code_on_quarantine: 0 }),
      expect.objectContaining({ id: 'globex', exit_code_on_quarantine: 4 }),
    ]);
  });

  it('Deployment mode: a daemon behind a Service whose labels the ServiceMonitor selects, on the port it scrapes', () => {
    const objects = ok(template(bin!, { values: [{ mode: 'deployment', serviceMonitor: { enabled: true, labels: { release: 'kps' } } }] }));
    const deploy = one(objects, 'Deployment');
    const service = one(objects, 'Service');
    const monitor = one(objects, 'ServiceMonitor');
    expect(deploy.spec.strategy).toEqual({ type: 'Recreate' });
    expect(deploy.spec.replicas).toBe(1);
    expect(podSpec(deploy).containers[0].args[0]).toBe('daemon');
    expect(monitor.metadata.labels.release).toBe('kps');
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(service.metadata.labels[k]).toBe(v);
    for (const [k, v] of Object.entries(service.spec.selector)) expect(podMeta(deploy).labels[k]).toBe(v);
    expect(service.spec.ports.map((p: Any) => p.name)).toContain(monitor.spec.endpoints[0].port);
    expect(podSpec(deploy).containers[0].ports).toEqual([{ name: 'metrics', containerPort: service.spec.ports[0].port, protocol: 'TCP' }]);
    // The daemon's ops listener (/metrics, /status, /plan, /plan.json) is on that port, so /plan is reachable through the Service.
    const dataKeys = ofKind(objects, 'ConfigMap').filter((c: Any) => c.data?.['orgsync.yaml']);
    const listen = String((parse(dataKeys[0].data['orgsync.yaml'] as string) as Any).metrics.listen);
    expect(Number(listen.slice(listen.lastIndexOf(':') + 1))).toBe(service.spec.ports[0].port);
    expect(service.spec.ports[0].targetPort).toBe('metrics');
    expect(volume(deploy, 'state')).toEqual({ name: 'state', persistentVolumeClaim: { claimName: 'orgsync' } });
    expect(one(objects, 'PersistentVolumeClaim').metadata.name).toBe('orgsync');
  });

  it('NOTES (issue 29): with daemon.read_token_file, how to open /plan through port-forward with the token from its Secret key; without it, that the personal routes answer 404 and which key opens them', () => {
    const withToken = { mode: 'deployment', existingSecret: 'orgsync-secrets', config: { daemon: { read_token_file: '/run/secrets/orgsync/read-token' } } };
    const notes = helm(bin!, ['install', 'orgsync', chartDir, '--dry-run=client', '--namespace', 'hr', ...setFile(withToken)]);
    expect(notes.status).toBe(0);
    expect(notes.stdout).toContain('  kubectl -n hr port-forward svc/orgsync 9464\n');
    expect(notes.stdout).toContain("  TOKEN=$(kubectl -n hr get secret orgsync-secrets -o jsonpath='{.data.read-token}' | base64 -d)\n");
    expect(notes.stdout).toContain('  curl -s -H "Authorization: Bearer $TOKEN" localhost:9464/plan -o plan.html && open plan.html\n');
    const config = parse(one(ok(template(bin!, { values: [withToken] })), 'ConfigMap').data['orgsync.yaml']);
    expect(config.daemon.read_token_file).toBe('/run/secrets/orgsync/read-token');
    const without = helm(bin!, ['install', 'orgsync', chartDir, '--dry-run=client', '--namespace', 'hr', ...setFile({ mode: 'deployment' })]);
    expect(without.status).toBe(0);
    expect(without.stdout).toContain('answer 404 until config.daemon.read_token_file names a key of existingSecret');
    expect(without.stdout).not.toContain('Authorization: Bearer $TOKEN');
  });

  it('networkPolicy (issue 22): the daemon\'s listener admits only Prometheus and the POST /sync callers, on its port', () => {
    const values = matrix.find(([n]) => n.startsWith('Deployment with a NetworkPolicy'))![1];
    const objects = ok(template(bin!, { values: [values] }));
    const policy = one(objects, 'NetworkPolicy');
    const deploy = one(objects, 'Deployment');
    expect(policy.metadata.name).toBe('orgsync');
    for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels)) expect(podMeta(deploy).labels[k]).toBe(v);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress).toEqual([
      {
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'hr-integration' } } },
          { ipBlock: { cidr: '10.20.0.0/16' } },
        ],
        // The named container port the Service targets: the listener of /metrics and POST /sync.
        ports: [{ port: 'metrics', protocol: 'TCP' }],
      },
    ]);
    expect(podSpec(deploy).containers[0].ports.map((p: Any) => p.name)).toContain('metrics');
    expect(one(objects, 'Service').spec.ports[0].targetPort).toBe('metrics');

    // One per tenant, each selecting only its own pods.
    const many = ok(template(bin!, { values: [matrix.find(([n]) => n === 'multi-tenant Deployments with NetworkPolicies')![1]] }));
    const policies = ofKind(many, 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name)).toEqual(['orgsync-acme', 'orgsync-globex']);
    for (const p of policies) {
      const selects = ofKind(many, 'Deployment').filter((dep) => Object.entries(p.spec.podSelector.matchLabels).every(([k, v]) => podMeta(dep).labels[k] === v));
      expect(selects.map((x: Any) => x.metadata.name)).toEqual([p.metadata.name]);
      expect(p.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: { app: 'hr-webhook-relay' } } }]);
    }
    // No peers at all: nothing may reach the pods (an empty `from` would admit everyone).
    const closed = ok(template(bin!, { values: [{ mode: 'deployment', networkPolicy: { enabled: true, prometheus: [] } }] }));
    expect(one(closed, 'NetworkPolicy').spec.ingress).toEqual([]);

    // Issue 44: on by default in both modes; only networkPolicy.enabled: false turns it off.
    expect(ofKind(ok(template(bin!, { values: [{ mode: 'deployment' }] })), 'NetworkPolicy')).toHaveLength(1);
    expect(ofKind(ok(template(bin!, { values: [{ mode: 'deployment', networkPolicy: { enabled: false } }] })), 'NetworkPolicy')).toEqual([]);
    expect(ofKind(ok(template(bin!, { values: [{ networkPolicy: { enabled: false } }] })), 'NetworkPolicy')).toEqual([]);
  });

  describe('issue 44: the chart\'s defaults keep credentials and people inside', () => {
    const DNS = { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] };
    const tcp = (...ports: number[]) => ports.map((port) => ({ port, protocol: 'TCP' }));

    it('the default install (CronJob) has a NetworkPolicy: no ingress at all; egress to DNS and the platform\'s port only', () => {
      const policy = one(ok(template(bin!)), 'NetworkPolicy');
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(policy.spec.ingress).toEqual([]);
      expect(policy.spec.egress).toEqual([DNS, { ports: tcp(443) }]);
    });

    it('a daemon: ingress to its listener from the monitoring namespace (and the listed callers); egress to DNS and the ports of every configured URL', async () => {
      const config = {
        platform: { base_url: 'https://platform.example.com:8443/tenant' },
        sources: [
          { name: 'dir', type: 'ldap', url: 'ldaps://ldap.example.com', base_dn: 'dc=example,dc=org' },
          { name: 'ad', type: 'ldap', url: 'ldap://ad.example.com:3268', start_tls: true, base_dn: 'dc=example,dc=org' },
          { name: 'graph', type: 'hris-json', preset: 'microsoft-graph', auth: { type: 'oauth2-client-credentials', token_url: 'https://login.example.com/token', client_id: 'c', client_secret: '${GRAPH_SECRET}' } },
          { name: 'hr', type: 'hris-json', members: { url: 'https://hr.example.com:9443/people', fields: { id: 'id', display_name: 'name' } } },
          { name: 'csv', type: 'csv', members: { file: '/etc/orgsync/data/members.csv', fields: { id: 'id', display_name: 'name' } } },
        ],
        notify: { webhooks: [{ url: 'https://hooks.example.com:8080/orgsync' }] },
      };
      const objects = ok(template(bin!, { values: [{ mode: 'deployment', config }] }));
      expect(await problems(objects)).toEqual([]);
      const policy = one(objects, 'NetworkPolicy');
      expect(policy.spec.ingress).toEqual([
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }],
          ports: [{ port: 'metrics', protocol: 'TCP' }],
        },
      ]);
      expect(policy.spec.egress).toEqual([DNS, { ports: tcp(443, 636, 3268, 8080, 8443, 9443) }]);
      // Narrowed to the operator's addresses, and rules of their own appended.
      const narrowed = one(
        ok(template(bin!, { values: [{ mode: 'deployment', config, networkPolicy: { egressTo: [{ ipBlock: { cidr: '203.0.113.0/24' } }], extraEgress: [{ to: [{ podSelector: { matchLabels: { app: 'hr-db' } } }], ports: [{ port: 5432, protocol: 'TCP' }] }] } }] })),
        'NetworkPolicy',
      );
      expect(narrowed.spec.egress).toEqual([
        DNS,
        { ports: tcp(443, 636, 3268, 8080, 8443, 9443), to: [{ ipBlock: { cidr: '203.0.113.0/24' } }] },
        { to: [{ podSelector: { matchLabels: { app: 'hr-db' } } }], ports: [{ port: 5432, protocol: 'TCP' }] },
      ]);
    });

    it('no ServiceAccount token in the pod, also with a ServiceAccount the chart does not create', () => {
      for (const values of [{}, { mode: 'deployment' }, { serviceAccount: { create: false, name: 'shared' } }]) {
        const objects = ok(template(bin!, { values: [values] }));
        const workload = ofKind(objects, 'CronJob')[0] ?? one(objects, 'Deployment');
        expect(podSpec(workload).automountServiceAccountToken).toBe(false);
      }
    });

    it('image.digest pins the image by content; a malformed digest is refused by the values schema', () => {
      const digest = `sha256:${'a1'.repeat(32)}`;
      const image = (values: Obj) => podSpec(one(ok(template(bin!, { values: [values] })), 'CronJob')).containers[0].image;
      expect(image({})).toBe(`ghcr.io/orgsync/orgsync:${String((chartValues() as Any).image.tag || parse(chartFile('Chart.yaml')).appVersion)}`);
      expect(image({ image: { digest } })).toBe(`ghcr.io/orgsync/orgsync@${digest}`);
      expect(image({ image: { tag: '1.2.3', digest } })).toBe(`ghcr.io/orgsync/orgsync:1.2.3@${digest}`);
      const bad = template(bin!, { values: [{ image: { digest: 'latest' } }] });
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toContain('digest');
    });

    it('metrics.tls: probes over HTTPS, the ServiceMonitor scrapes https with its tlsConfig, and NOTES stop warning about plain HTTP', () => {
      const tls = { mode: 'deployment', serviceMonitor: { enabled: true, tlsConfig: { ca: { secret: { name: 'orgsync-tls', key: 'ca.crt' } }, serverName: 'orgsync.hr.svc' } }, config: { metrics: { tls: { cert_file: '/etc/orgsync/tls/tls.crt', key_file: '/etc/orgsync/tls/tls.key' } } } };
      const objects = ok(template(bin!, { values: [tls] }));
      const c = podSpec(one(objects, 'Deployment')).containers[0];
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics', scheme: 'HTTPS' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics', scheme: 'HTTPS' });
      expect(one(objects, 'ServiceMonitor').spec.endpoints[0]).toMatchObject({ port: 'metrics', scheme: 'https', tlsConfig: { ca: { secret: { name: 'orgsync-tls', key: 'ca.crt' } }, serverName: 'orgsync.hr.svc' } });
      const plain = ok(template(bin!, { values: [{ mode: 'deployment', serviceMonitor: { enabled: true } }] }));
      expect(podSpec(one(plain, 'Deployment')).containers[0].readinessProbe.httpGet.scheme).toBe('HTTP');
      expect(one(plain, 'ServiceMonitor').spec.endpoints[0].scheme).toBeUndefined();
      const notes = (values: Obj) => helm(bin!, ['install', 'orgsync', chartDir, '--dry-run=client', '--namespace', 'hr', ...setFile(values)]).stdout;
      expect(notes({ mode: 'deployment' })).toContain('The listener speaks plain HTTP: the read token and /plan cross the cluster network in clear. Set config.metrics.tls');
      expect(notes(tls)).not.toContain('speaks plain HTTP');
    });
  });

  describe('many tenants from one release', () => {
    const values = matrix.find(([n]) => n === 'multi-tenant CronJobs')![1];
    const objects = bin ? ok(template(bin!, { values: [values] })) : [];
    const byName = (kind: string, name: string): Any => ofKind(objects, kind).find((o) => o.metadata.name === name);

    it('one CronJob, ConfigMap and PVC per tenant, named <release>-<tenant> and labelled orgsync.io/tenant', () => {
      expect(ofKind(objects, 'CronJob').map((o) => o.metadata.name)).toEqual(['orgsync-acme', 'orgsync-globex', 'orgsync-initech']);
      // initech brings its own ConfigMap and claim.
      expect(ofKind(objects, 'ConfigMap').map((o) => o.metadata.name)).toEqual(['orgsync-acme', 'orgsync-globex']);
      expect(ofKind(objects, 'PersistentVolumeClaim').map((o) => o.metadata.name)).toEqual(['orgsync-acme', 'orgsync-globex']);
      for (const o of objects.filter((x) => x.kind !== 'ServiceAccount')) expect(o.metadata.labels?.['orgsync.io/tenant'], `${o.kind}/${o.metadata.name}`).toBe(o.metadata.name.slice('orgsync-'.length));
      for (const cron of ofKind(objects, 'CronJob')) expect(podMeta(cron).labels['orgsync.io/tenant']).toBe(cron.metadata.name.slice('orgsync-'.length));
    });

    it('each tenant gets its own config, sync.id, secret, schedule, state volume and resources', () => {
      const acme = parse(byName('ConfigMap', 'orgsync-acme').data['orgsync.yaml']) as Any;
      const globex = parse(byName('ConfigMap', 'orgsync-globex').data['orgsync.yaml']) as Any;
      expect(acme.sync.id).toBe('acme');
      expect(acme.platform.base_url).toBe('https://platform.example.com');
      expect(globex.sync.id).toBe('globex-hr');
      expect(globex.platform).toEqual({ base_url: 'https://globex.platform.example', api_key_file: '/run/secrets/orgsync/api-key' });
      expect(globex.sources).toEqual(acme.sources);

      const acmeJob = byName('CronJob', 'orgsync-acme');
      const globexJob = byName('CronJob', 'orgsync-globex');
      const initechJob = byName('CronJob', 'orgsync-initech');
      // spreadMinutes (default 30) moves the release's "*/30 * * * *" by adler32(name) mod 30.
      expect(acmeJob.spec.schedule).toBe(`${adler32('acme') % 30}-59/30 * * * *`);
      expect(acme.schedule).toBe(acmeJob.spec.schedule);
      expect(globexJob.spec).toMatchObject({ schedule: '15 2 * * *', timeZone: 'Europe/Berlin' });
      expect(globex).toMatchObject({ schedule: '15 2 * * *', timezone: 'Europe/Berlin' });

      expect(volume(acmeJob, 'secrets').secret.secretName).toBe('shared-secrets');
      expect(volume(globexJob, 'secrets').secret.secretName).toBe('globex-secrets');
      expect(volume(acmeJob, 'state').persistentVolumeClaim.claimName).toBe('orgsync-acme');
      expect(volume(initechJob, 'state').persistentVolumeClaim.claimName).toBe('initech-state');
      expect(volume(initechJob, 'config').configMap.name).toBe('initech-config');
      expect(byName('PersistentVolumeClaim', 'orgsync-globex').spec.resources.requests.storage).toBe('5Gi');
      expect(byName('PersistentVolumeClaim', 'orgsync-acme').spec.resources.requests.storage).toBe('1Gi');
      expect(podSpec(globexJob).containers[0].resources).toEqual({ requests: { cpu: '50m', memory: '1Gi' }, limits: { memory: '2Gi' } });
      expect(podSpec(acmeJob).containers[0].resources.limits.memory).toBe('512Mi');
      expect(podMeta(acmeJob).annotations['checksum/config']).not.toBe(podMeta(globexJob).annotations['checksum/config']);
    });

    it('an empty tenants list keeps the single-tenant layout exactly', () => {
      const plain = ok(template(bin!));
      expect(ok(template(bin!, { values: [{ tenants: [] }] }))).toEqual(plain);
      expect(plain.some((o) => o.metadata.labels?.['orgsync.io/tenant'])).toBe(false);
    });

    it('Deployment mode: each tenant\'s Service selects only its own pods, and the one ServiceMonitor selects every Service', () => {
      const d = ok(template(bin!, { values: [matrix.find(([n]) => n === 'multi-tenant Deployments with ServiceMonitor')![1]] }));
      const monitor = one(d, 'ServiceMonitor');
      const deployments = ofKind(d, 'Deployment');
      expect(deployments.map((x) => x.metadata.name)).toEqual(['orgsync-acme', 'orgsync-globex']);
      expect(ofKind(d, 'PersistentVolumeClaim').map((x) => x.metadata.name)).toEqual(['orgsync-acme']);
      for (const service of ofKind(d, 'Service')) {
        for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(service.metadata.labels[k]).toBe(v);
        const selects = deployments.filter((dep) => Object.entries(service.spec.selector).every(([k, v]) => podMeta(dep).labels[k] === v));
        expect(selects.map((x) => x.metadata.name)).toEqual([service.metadata.name]);
        const dep = selects[0];
        expect(Object.entries(dep.spec.selector.matchLabels).every(([k, v]) => service.spec.selector[k] === v)).toBe(true);
      }
      // The dashboard picks a tenant by sync_id; every panel query filters on it.
      const dashboard = JSON.parse(ofKind(d, 'ConfigMap').find((c) => c.metadata.name === 'orgsync-dashboard').data['orgsync.json']) as Any;
      expect(dashboard.templating.list.map((v: Any) => v.name)).toContain('sync_id');
      const exprs: string[] = dashboard.panels.flatMap((p: Any) => (p.targets ?? []).map((t: Any) => t.expr));
      expect(exprs.filter((e) => !e.includes('sync_id=~"$sync_id"'))).toEqual([]);
    });

    it('scale: 200 tenants render to exactly 200 CronJobs, ConfigMaps, PVCs and NetworkPolicies, uniquely named, schema-valid, minutes spread', async () => {
      const tenants = Array.from({ length: 200 }, (_, i) => ({ name: `tenant-${String(i).padStart(3, '0')}` }));
      const started = performance.now();
      const r = template(bin!, { values: [{ schedule: '0 * * * *', spreadMinutes: 60, tenants }] });
      const ms = performance.now() - started;
      const rendered = ok(r);
      console.log(`helm template of 200 tenants: ${Math.round(ms)} ms, ${rendered.length} objects`);
      for (const kind of ['CronJob', 'ConfigMap', 'PersistentVolumeClaim', 'NetworkPolicy']) {
        const names = ofKind(rendered, kind).map((o) => o.metadata.name);
        expect(names, kind).toHaveLength(200);
        expect(new Set(names).size, kind).toBe(200);
        expect(new Set(names)).toEqual(new Set(tenants.map((t) => `orgsync-${t.name}`)));
      }
      expect(rendered).toHaveLength(801);
      const syncIds = ofKind(rendered, 'ConfigMap').map((c) => (parse(c.data['orgsync.yaml']) as Any).sync.id);
      expect(new Set(syncIds).size).toBe(200);
      const minutes = ofKind(rendered, 'CronJob').map((c) => {
        expect(c.spec.schedule).toBe(`${adler32(c.metadata.name.slice('orgsync-'.length)) % 60} * * * *`);
        return c.spec.schedule.split(' ')[0];
      });
      expect(new Set(minutes).size).toBeGreaterThan(30);
      expect(await problems(rendered)).toEqual([]);
    });
  });

  it('the PrometheusRule helm renders is files/alerts.yaml as the promtool tests render it (test/helm/alerts.test.ts)', () => {
    const rule = one(ok(template(bin!, { values: [{ prometheusRule: { enabled: true } }] })), 'PrometheusRule');
    expect(rule.spec).toEqual(parse(renderAlerts(chartValues())));
    expect(rule.spec.groups[0].rules.length).toBeGreaterThanOrEqual(6);
  });

  describe('values.schema.json, applied by helm template, rejects bad values', () => {
    it.each([
      ['an unknown mode', { mode: 'daemonset' }, "at '/mode': value must be one of 'cronjob', 'deployment'"],
      ['a misspelt value', { persistance: { enabled: true } }, "additional properties 'persistance' not allowed"],
      ['a root container', { securityContext: { runAsNonRoot: false } }, "at '/securityContext/runAsNonRoot'"],
      ['two daemons', { deployment: { replicas: 2 } }, "at '/deployment/replicas': maximum: got 2, want 1"],
      ['an unknown config field', { config: { platform: { base_url: 'https://p.example', bogus: 1 } } }, "at '/config/platform': additional properties 'bogus' not allowed"],
      ['a bad schedule', { schedule: 'hourly' }, "at '/schedule'"],
      ['no time to shut down', { shutdownTimeoutSeconds: 0 }, "at '/shutdownTimeoutSeconds': minimum: got 0, want 1"],
      ['a tenant name that is no DNS label', { tenants: [{ name: 'Acme_Corp' }] }, "at '/tenants/0/name': 'Acme_Corp' does not match pattern"],
      ['a tenant without a name', { tenants: [{ schedule: '0 * * * *' }] }, "at '/tenants/0': missing property 'name'"],
      ['an unknown tenant field', { tenants: [{ name: 'acme', secret: 'x' }] }, "at '/tenants/0': additional properties 'secret' not allowed"],
      ['an unknown field in a tenant config', { tenants: [{ name: 'acme', config: { sync: { idd: 'x' } } }] }, "at '/tenants/0/config/sync': additional properties 'idd' not allowed"],
    ])('%s', (_name, values, message) => {
      const r = template(bin!, { values: [values] });
      expect(r.stderr).toContain("values don't meet the specifications of the schema(s)");
      expect(r.stderr).toContain(message);
      expect(r.status).not.toBe(0);
    });

    it('and the chart refuses two tenants of one name, a CronJob name Kubernetes would refuse, or a clash with the dashboard', () => {
      const twice = template(bin!, { values: [{ tenants: [{ name: 'acme' }, { name: 'acme' }] }] });
      expect(twice.status).not.toBe(0);
      expect(twice.stderr).toContain('tenants: the name "acme" is given twice; each tenant needs its own name (its objects are named orgsync-<name>)');
      const long = template(bin!, { values: [{ tenants: [{ name: 'a'.repeat(45) }] }] });
      expect(long.status).not.toBe(0);
      expect(long.stderr).toContain(`tenants: "orgsync-${'a'.repeat(45)}" is 53 characters; a CronJob name (<release>-<tenant>) may have at most 52`);
      const clash = template(bin!, { values: [{ dashboard: { enabled: true }, tenants: [{ name: 'dashboard' }] }] });
      expect(clash.status).not.toBe(0);
      expect(clash.stderr).toContain('tenants: the name "dashboard" would name its ConfigMap orgsync-dashboard, the dashboard\'s; rename the tenant');
    });
  });
});

const examples = readdirSync(join(chartDir, 'examples')).filter((f) => f.endsWith('.yaml')).sort();
const readme = chartFile('README.md');
/** The README's ```yaml blocks: values files, or (with apiVersion and kind) Kubernetes objects it asks you to apply. */
const readmeBlocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m, i) => ({ index: i + 1, text: m[1]! }));

describe.skipIf(!bin)('the examples and the chart README, rendered (so they cannot rot)', () => {
  it('there are examples and README blocks to check', () => {
    expect(examples).toEqual(expect.arrayContaining(['cronjob-pushgateway.yaml', 'deployment-servicemonitor.yaml', 'many-tenants.yaml']));
    expect(readmeBlocks.length).toBeGreaterThanOrEqual(3);
  });

  it.each(examples)('examples/%s: helm lint --strict, and every rendered object schema-valid', async (file) => {
    const lint = helm(bin!, ['lint', '--strict', chartDir, '-f', join(chartDir, 'examples', file)]);
    expect(lint.stderr + lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    const objects = ok(template(bin!, { args: ['-f', join(chartDir, 'examples', file)] }));
    expect(ofKind(objects, 'CronJob').length + ofKind(objects, 'Deployment').length).toBeGreaterThanOrEqual(1);
    expect(await problems(objects)).toEqual([]);
  });

  it.each(readmeBlocks.map((b) => [b.index, b]))('README yaml block %i renders (values) or validates (a Kubernetes object)', async (_i, block) => {
    const doc = parse(block.text) as Obj;
    if ('apiVersion' in doc && 'kind' in doc) {
      expect(await schemaProblems(doc as unknown as K8sObject)).toEqual([]);
      return;
    }
    const objects = ok(template(bin!, { values: [doc] }));
    expect(await problems(objects)).toEqual([]);
  });

  it('the README\'s table of what examples/many-tenants.yaml renders is what helm renders', () => {
    const objects = ok(template(bin!, { release: 'hr', args: ['-f', join(chartDir, 'examples/many-tenants.yaml')] }));
    const rows = ofKind(objects, 'CronJob').map((cron) => {
      const tenant = cron.metadata.labels['orgsync.io/tenant'];
      const config = parse(ofKind(objects, 'ConfigMap').find((c) => c.metadata.name === cron.metadata.name).data['orgsync.yaml']) as Any;
      const pvc = ofKind(objects, 'PersistentVolumeClaim').find((c) => c.metadata.name === cron.metadata.name);
      return `| ${tenant} | \`${cron.metadata.name}\` | \`${config.sync.id}\` | \`${cron.spec.schedule}\` | ${pvc.spec.resources.requests.storage} |`;
    });
    const table = /<!-- rendered: examples\/many-tenants.yaml[^>]*-->\n\| tenant [^\n]*\n\|[-|]+\|\n([\s\S]*?)\n<!-- end rendered -->/.exec(readme);
    expect(table, 'the rendered table in helm/orgsync/README.md').not.toBeNull();
    expect(table![1]!.split('\n')).toEqual(rows);
  });

  it('every examples/ file the README names exists', () => {
    const named = [...readme.matchAll(/examples\/([a-z0-9-]+\.yaml)/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((f) => !existsSync(join(chartDir, 'examples', f)))).toEqual([]);
  });
});

/** A values object as helm arguments (one --set-json per top-level key), for the commands other than template(). */
function setFile(values: Obj): string[] {
  return Object.entries(values).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]);
}
