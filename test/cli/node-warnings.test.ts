/**
 * Issue 42 point 4: nothing printed that is not meant. The built CLI as a process, at the settings the docs advise
 * for a large tenant (five API keys, `platform.concurrency: 64`, the largest the schema takes) and 16, with two
 * sources, on a platform slow enough that every request of the concurrency is in flight at once: the process emits
 * no warning at all (a preloaded listener sees every one) and its stderr holds orgsync's own lines only. Each request
 * and paced wait used to listen to the run's abort signal itself, 64 listeners on one signal, past the 10 after which
 * Node warns `MaxListenersExceededWarning: Possible EventTarget memory leak detected`; now one listener fans out
 * (src/shared/abort-waiters.ts, whose unit test counts the listeners).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from '../helpers/build.js';
import { orgTestSeed, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';

const KEYS = [1, 2, 3, 4, 5].map((n) => `ek_acmewarn${n}_0123456789abcdef${n}`);
const NO_LIMITS = { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0 };

const TREE = org({
  departments: Array.from({ length: 30 }, (_, i): [string, string] => [`d${i}`, `Department ${i}`]),
  positions: [['p1', 'Engineer']],
  members: Array.from({ length: 600 }, (_, i): [string, string, string, string] => [`u${i}`, `Person ${i}`, `person${i}@acme.test`, `d${i % 30}`]),
});

let emulator: TestEmulator;
let dir: string;

beforeAll(() => ensureBuilt(), 120_000);
/** A tenant of its own for each case (five keys, no rate limit), and the two sources' files. */
beforeEach(async () => {
  const seed = orgTestSeed(NO_LIMITS) as { tenants: { api_keys: { key: string; scopes: string[] }[] }[] };
  seed.tenants[0]!.api_keys.push(...KEYS.map((key) => ({ key, scopes: ['tenant.org.read', 'tenant.org.write'] })));
  emulator = await startTestEmulator(seed as unknown as Record<string, unknown>, { adminToken: ADMIN });
  dir = tempDir('orgsync-warnings-');
  writeCsvOrg(dir, TREE);
  writeFileSync(join(dir, 'contractors.csv'), ['id,name,email', ...Array.from({ length: 50 }, (_, i) => `c${i},Contractor ${i},contractor${i}@acme.test`)].join('\n'));
});
afterEach(async () => {
  await emulator.close();
});

/** A config at `concurrency` with every key, both sources; returns its path. */
function configAt(concurrency: number, name: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      'platform:',
      `  base_url: ${emulator.url}`,
      '  api_keys:',
      ...KEYS.map((k) => `    - key: ${k}`),
      '  requests_per_second: 10000',
      '  tenant_requests_per_second: 10000',
      `  concurrency: ${concurrency}`,
      'state:',
      `  path: ${join(dir, `${name}.db`)}`,
      'sync:',
      `  id: ${name}`,
      'sources:',
      '  - name: hr',
      '    type: csv',
      '    departments: { file: departments.csv, fields: { id: id, name: name, parent: parent } }',
      '    positions: { file: positions.csv, fields: { id: id, name: name } }',
      '    members: { file: members.csv, fields: { id: id, display_name: name, email: email, title: title, department: dept, status: status } }',
      '  - name: contractors',
      '    type: csv',
      '    members: { file: contractors.csv, fields: { id: id, display_name: name, email: email } }',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * `node dist/cli.js ARGS` as a user runs it (not spawnSync: the emulator answers from this process): exit code, stderr
 * and every warning the process emitted, seen by a preloaded listener (a warning is process-wide, whatever stderr's
 * writer does with it).
 */
async function run(args: string[]): Promise<{ code: number | null; stderr: string; warnings: string[] }> {
  const probe = join(dir, 'warnings.cjs');
  const seen = join(dir, 'warnings.log');
  writeFileSync(probe, `process.on('warning', (w) => require('node:fs').appendFileSync(${JSON.stringify(seen)}, w.name + ': ' + w.message + '\\n'));\n`);
  writeFileSync(seen, '');
  const child = spawn(process.execPath, ['--require', probe, CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  });
  return { code, stderr, warnings: readFileSync(seen, 'utf8').split('\n').filter((l) => l !== '') };
}

/** Lines of stderr that are not orgsync's own (its lines start with `orgsync:` or are JSON log lines). */
function foreignLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('orgsync:') && !l.startsWith('{'));
}

describe('no Node warning at the documented settings', () => {
  for (const concurrency of [16, 64]) {
    it(`concurrency ${concurrency}, five keys, two sources: sync, a second sync and plan print no warning`, async () => {
      // A platform that takes 20-40 ms to answer (a large tenant's): every request of the concurrency is in flight at once.
      await emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: { latency_ms: [20, 40] } });
      const config = configAt(concurrency, `c${concurrency}`);
      const first = await run(['sync', '--config', config]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.warnings).toEqual([]);
      expect(foreignLines(first.stderr)).toEqual([]);
      expect(first.stderr).not.toMatch(/Warning|MaxListeners|DeprecationWarning|ExperimentalWarning/);
      const second = await run(['sync', '--config', config]);
      expect(second.code).toBe(0);
      expect(second.warnings).toEqual([]);
      expect(foreignLines(second.stderr)).toEqual([]);
      const plan = await run(['plan', '--config', config]);
      expect(plan.code).toBe(0);
      expect(plan.warnings).toEqual([]);
      expect(foreignLines(plan.stderr)).toEqual([]);
    }, 180_000);
  }
});
