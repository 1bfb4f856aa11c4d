/** Saved plans and the drift check through the CLI against the emulator: plan --out, apply, refusals, --detailed-exitcode. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [
    ['eng', 'Engineering'],
    ['sales', 'Sales'],
  ],
  positions: [['p1', 'Engineer']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
    ['u3', 'Cid Moe', 'cid@acme.test', 'sales'],
  ],
});

let emulator: TestEmulator;
let dir: string;
let config: string;
let planFile: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-trust-');
  writeCsvOrg(dir, TREE);
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
  planFile = join(dir, 'plan.json');
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

async function members(): Promise<PlatformMember[]> {
  return (await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[];
}

describe('orgsync plan --out / orgsync apply', () => {
  it('applies an unchanged saved plan: exactly the writes it listed, then in sync', async () => {
    const planned = await cli('plan', '--config', config, '--out', planFile);
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain(`plan written to ${planFile}`);
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    expect(saved.kind).toBe('orgsync-saved-plan');
    expect(saved.inputs.mirror_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(saved.inputs.source_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(saved.integrity).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(saved.counts.members.create).toBe(3);
    expect(saved.plan.changes.every((c: { reason: string }) => c.reason.length > 0)).toBe(true);
    const listed = saved.plan.changes.length as number;
    expect(listed).toBe(6);
    expect(await writeCalls(emulator)).toBe(0);

    const applied = await cli('apply', planFile, '--config', config);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^sync hr-sync: applied \(exit 0\)/);
    expect(applied.stdout).toMatch(/API calls: [1-9]\d*, 429s: 0/);
    expect(await writeCalls(emulator)).toBe(listed);
    expect((await members()).map((m) => m.third_user_id).filter(Boolean).sort()).toEqual(['u1', 'u2', 'u3']);
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(0);
  });

  it('refuses (exit 2, nothing written) a saved plan when the platform changed since', async () => {
    expect((await cli('plan', '--config', config, '--out', planFile)).code).toBe(0);
    const made = await emulator.request('POST', '/api/external/v1/org/departments', { token: TEST_KEYS.acmeRw, body: { name: 'Made by hand' } });
    expect(made.status).toBe(201);
    const before = await writeCalls(emulator);
    const r = await cli('apply', planFile, '--config', config);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^orgsync: .*plan\.json: the platform changed since the plan was made/m);
    expect(await writeCalls(emulator)).toBe(before);
  });

  it('refuses (exit 2, nothing written) a saved plan when the sources changed since', async () => {
    expect((await cli('plan', '--config', config, '--out', planFile)).code).toBe(0);
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].slice(0, 2) });
    const r = await cli('apply', planFile, '--config', config);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the sources changed since the plan was made/);
    expect(await writeCalls(emulator)).toBe(0);
  });

  it('refuses (exit 2, nothing written) an edited plan file', async () => {
    expect((await cli('plan', '--config', config, '--out', planFile)).code).toBe(0);
    const saved = JSON.parse(readFileSync(planFile, 'utf8'));
    saved.plan.changes[0].request.body.name = 'Edited';
    writeFileSync(planFile, JSON.stringify(saved, null, 2));
    const edited = await cli('apply', planFile, '--config', config);
    expect(edited.code).toBe(2);
    expect(edited.stderr).toMatch(/the plan file was edited after it was written/);

    // Dropping a change is an edit too, and so is recomputing a plain hash: the signature is keyed by the state DB.
    saved.plan.changes = saved.plan.changes.slice(1);
    writeFileSync(planFile, JSON.stringify(saved));
    expect((await cli('apply', planFile, '--config', config)).code).toBe(2);
    writeFileSync(planFile, '{ not json');
    const broken = await cli('apply', planFile, '--config', config);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/not a saved plan/);
    expect(await writeCalls(emulator)).toBe(0);
  });

  it('refuses to apply a plan that a guard refused when it was made (exit 3)', async () => {
    expect((await cli('sync', '--config', config)).code).toBe(0);
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].slice(0, 1) });
    const planned = await cli('plan', '--config', config, '--out', planFile);
    expect(planned.code).toBe(3);
    const before = await writeCalls(emulator);
    const r = await cli('apply', planFile, '--config', config);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/the plan was refused by source_shrink when it was made/);
    expect(await writeCalls(emulator)).toBe(before);
  });
});

describe('orgsync plan --detailed-exitcode', () => {
  it('exits 5 with changes pending and 0 when in sync; without the flag 0 either way', async () => {
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(5);
    expect((await cli('plan', '--config', config)).code).toBe(0);
    expect((await cli('sync', '--config', config)).code).toBe(0);
    const inSync = await cli('plan', '--config', config, '--detailed-exitcode', '--output', 'json');
    expect(inSync.code).toBe(0);
    expect(JSON.parse(inSync.stdout).in_sync).toBe(true);
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].map((m) => (m.source_id === 'u1' ? { ...m, display_name: 'Ann Lee-Smith' } : m)) });
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(5);
  });
});
