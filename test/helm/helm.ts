/**
 * The real helm v4 for the chart tests: tools/helm.sh fetches it once into ~/.cache/orgsync-tools (or takes
 * $ORGSYNC_HELM). Unavailable on a laptop without network: the tests skip with a printed notice. Unavailable under
 * CI=true (or with ORGSYNC_HELM set but broken): an error, since .ci/run provides it.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { chartDir } from './chart.js';
import { tempDir } from '../helpers/temp.js';

const script = resolve(import.meta.dirname, '../../tools/helm.sh');

let cached: string | undefined | null = null;

/** The helm binary's path, or undefined (tests skip) when it cannot be had outside CI. */
export function helmBin(): string | undefined {
  if (cached !== null) return cached;
  const r = spawnSync('bash', [script], { encoding: 'utf8', timeout: 300_000 });
  const path = r.stdout.trim();
  if (r.status === 0 && path) return (cached = path);
  const why = r.stderr.trim() || `tools/helm.sh exited ${r.status ?? r.signal}`;
  if (process.env.CI === 'true' || process.env.ORGSYNC_HELM) throw new Error(`${why} (CI=true or ORGSYNC_HELM set: the chart tests must not skip)`);
  console.warn(`NOTICE: ${why}; skipping the tests that need helm.`);
  return (cached = undefined);
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs helm with the given arguments (HOME-independent: nothing is written outside a temporary folder). */
export function helm(bin: string, args: string[]): HelmResult {
  const home = tempDir('orgsync-helm-home-');
  try {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') };
    const r = spawnSync(bin, args, { encoding: 'utf8', env, maxBuffer: 256 * 1024 * 1024, timeout: 120_000 });
    return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** A rendered Kubernetes object. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** What `helm template` gave: its exit status, the parsed objects and the raw output. */
export interface Rendered extends HelmResult {
  objects: K8sObject[];
}

/**
 * `helm template <release> helm/orgsync` with each values object written to a file (`-f`, in order) plus extra
 * arguments (e.g. `-f examples/x.yaml`, `--show-only`). Parses the output with the `yaml` package.
 */
export function template(bin: string, options: { release?: string; values?: Record<string, unknown>[]; args?: string[] } = {}): Rendered {
  const dir = tempDir('orgsync-helm-values-');
  try {
    const files = (options.values ?? []).map((v, i) => {
      const file = join(dir, `values-${i}.yaml`);
      writeFileSync(file, stringify(v));
      return file;
    });
    const r = helm(bin, ['template', options.release ?? 'orgsync', chartDir, '--namespace', 'hr', ...files.flatMap((f) => ['-f', f]), ...(options.args ?? [])]);
    const objects = r.status === 0 ? parseObjects(r.stdout) : [];
    return { ...r, objects };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The objects of a multi-document YAML stream (empty documents dropped); a YAML error throws. Read as YAML 1.1, as
 * Kubernetes reads manifests (so `defaultMode: 0400` is octal 256, as the API server sees it).
 */
export function parseObjects(text: string): K8sObject[] {
  const out: K8sObject[] = [];
  for (const doc of parseAllDocuments(text, { version: '1.1' })) {
    if (doc.errors.length > 0) throw new Error(`helm template output is not valid YAML: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as K8sObject | null;
    if (value) out.push(value);
  }
  return out;
}
