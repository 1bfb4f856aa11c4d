/**
 * Issue 42 point 4: nothing printed that is not meant. The built CLI as a process, at the settings the docs advise
 * for a large tenant (five API keys, `platform.concurrency: 64`) and the largest the schema takes (256), with two
 * sources: its stderr holds orgsync's own lines only, never a Node warning. Before, every run with more than ten
 * requests in flight printed `MaxListenersExceededWarning: Possible EventTarget memory leak detected` (each
 * request and paced wait listened to the run's abort signal; now one listener fans out: src/shared/abort-waiters.ts).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

beforeAll(async () => {
  ensureBuilt();
  const seed = orgTestSeed(NO_LIMITS) as { tenants: { api_keys: { key: string; scopes: string[] }[] }[] };
  seed.tenants[0]!.api_keys.push(...KEYS.map((key) => ({ key, scopes: ['tenant.org.read', 'tenant.org.write'] })));
  emulator = await startTestEmulator(seed as unknown as Record<string, unknown>, { adminToken: ADMIN });
  dir = tempDir('orgsync-warnings-');
  writeCsvOrg(dir, TREE);
  // A second source: contractors in a JSON file (an hris-json source reads a file URL only over http; a CSV does).
  writeFileSync(join(dir, 'contractors.csv'), ['id,name,email', ...Array.from({ length: 50 }, (_, i) => `c${i},Contractor ${i},contractor${i}@acme.test`)].join('\n'));
}, 120_000);
afterAll(async () => {
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
      ...KEYS.map((k) => `    - ${k}`),
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

/** `node dist/cli.js ARGS` as a user runs it: exit code and stderr. */
function run(args: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stderr: r.stderr };
}

/** Lines of stderr that are not orgsync's own (its lines start with `orgsync:` or are JSON log lines). */
function foreignLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('orgsync:') && !l.startsWith('{'));
}

describe('no Node warning at the documented settings', () => {
  for (const concurrency of [64, 256]) {
    it(`concurrency ${concurrency}, five keys, two sources: sync, a second sync and plan print no warning`, () => {
      const config = configAt(concurrency, `c${concurrency}`);
      const first = run(['sync', '--config', config]);
      expect(first.code, first.stderr).toBe(0);
      expect(foreignLines(first.stderr)).toEqual([]);
      expect(first.stderr).not.toMatch(/Warning|MaxListeners|DeprecationWarning|ExperimentalWarning/);
      const second = run(['sync', '--config', config]);
      expect(second.code).toBe(0);
      expect(foreignLines(second.stderr)).toEqual([]);
      const plan = run(['plan', '--config', config]);
      expect(plan.code).toBe(0);
      expect(foreignLines(plan.stderr)).toEqual([]);
    }, 180_000);
  }
});
