/**
 * Issue 15 point 11: `sync.exit_code_on_quarantine` (default 4; 0 makes a run whose only problem is quarantined
 * records exit 0, still counted in the summary). Failed writes still exit 4.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [['eng', 'Engineering']],
  positions: [['p1', 'Engineer']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
  ],
});
const WITH_BAD = { ...TREE, members: [...TREE.members, { source_id: 'u6', display_name: 'Bad Mail', email: 'not-an-email', status: 'active' as const }] };
const ZERO = 'id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  exit_code_on_quarantine: 0';

let emulator: TestEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-qexit-');
  writeCsvOrg(dir, WITH_BAD);
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sync.exit_code_on_quarantine', () => {
  it('default 4: a quarantined record makes the run exit 4', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    const r = await cli('sync', '--config', config);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/^sync hr-sync: finished with records failed or quarantined \(exit 4\)/);
  });

  it('0: a run whose only problem is quarantine exits 0, and still counts and names the record', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: ZERO });
    const r = await cli('sync', '--config', config);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sync hr-sync: finished with records failed or quarantined \(exit 0\)/);
    expect(r.stdout).toContain(', quarantined: 1, ');
    expect(r.stdout).toMatch(/^ {2}members u6 \(hr /m);
    const doc = JSON.parse((await cli('sync', '--config', config, '--output', 'json')).stdout);
    expect(doc).toMatchObject({ result: 'partial', exit_code: 0 });
    expect(doc.quarantined).toHaveLength(1);
  });

  it('0: failed writes still exit 4', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: ZERO });
    // Every position create is refused (400): one change fails for good.
    await emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: { probability: 1, statuses: [400], methods: ['POST'], paths: '/org/positions$' } });
    const r = await cli('sync', '--config', config, '--output', 'json');
    expect(r.code).toBe(4);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ result: 'partial', exit_code: 4 });
    expect(doc.failures.map((f: { third_id: string; status: string }) => [f.third_id, f.status])).toEqual([['p1', 'failed']]);
    expect(doc.quarantined).toHaveLength(1);
  });

  it('rejects a value other than 0 or 4 with exit 2, naming the key', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: hr-sync\n  exit_code_on_quarantine: 3' });
    const r = await cli('config', 'validate', '--config', config);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sync.exit_code_on_quarantine');
  });
});
