/**
 * Issue 15, point 9: under `policy: create-only` (and `upsert-only`) a new member who is suspended in HR is never left
 * active. POST /org/members takes no status (docs/decisions.md, reading 1: a new member is active), so the plan
 * carries the status PATCH as part of the create, and the policy lets it through with the create. When that PATCH
 * fails after the create succeeded, the state DB remembers what the create still owes, and the next run sends it as
 * part of that create again (not as an update, which create-only would hold back) while HR still asks for it.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { FaultProxy } from '../faults/proxy.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [['eng', 'Engineering']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Sue Spend', 'sue@acme.test', 'eng', 'suspended'],
  ],
});

let emulator: TestEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-create-only-');
  writeCsvOrg(dir, TREE);
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

async function members(): Promise<Record<string, string>> {
  const res = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw });
  return Object.fromEntries((res.body.items as PlatformMember[]).filter((m) => m.third_user_id !== '').map((m) => [m.third_user_id, m.status]));
}

describe.each(['create-only', 'upsert-only'])('policy: %s', (policy) => {
  it('creates a new hire who is suspended in HR as suspended, and the next run has nothing to do', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: `id: hr-sync\n  policy: ${policy}` });
    const plan = await cli('plan', '--config', config, '--output', 'json');
    expect(plan.code).toBe(0);
    const doc = JSON.parse(plan.stdout) as { changes: { id: string; depends_on: string[] }[]; withheld: unknown[] };
    expect(doc.changes.map((c) => c.id)).toContain('members:update:u2');
    expect(doc.changes.find((c) => c.id === 'members:update:u2')?.depends_on).toEqual(['members:create:u2']);
    expect(doc.withheld).toEqual([]);

    const sync = await cli('sync', '--config', config);
    expect(sync.stderr).not.toContain('"level":50');
    expect(sync.code).toBe(0);
    expect(await members()).toEqual({ u1: 'active', u2: 'suspended' });

    const again = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(again.code).toBe(0);
  });
});

describe('policy: create-only still leaves existing members alone', () => {
  it('an owned member suspended in HR later is not suspended (that is an update of an existing record)', async () => {
    const config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: hr-sync\n  policy: create-only' });
    expect((await cli('sync', '--config', config)).code).toBe(0);
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].map((m) => (m.source_id === 'u1' ? { ...m, status: 'suspended' } : m)) });
    const plan = await cli('plan', '--config', config, '--output', 'json');
    const doc = JSON.parse(plan.stdout) as { changes: unknown[]; withheld: { id: string; why: string }[] };
    expect(doc.changes).toEqual([]);
    expect(doc.withheld.map((w) => [w.id, w.why])).toEqual([['members:update:u1', 'policy:create-only']]);
    expect((await cli('sync', '--config', config)).code).toBe(0);
    expect(await members()).toEqual({ u1: 'active', u2: 'suspended' });
  });
});

describe('policy: create-only, when the status PATCH after a create fails', () => {
  let proxy: FaultProxy;
  beforeEach(async () => {
    proxy = await FaultProxy.start(emulator.url);
  });
  afterEach(async () => {
    await proxy.close();
  });

  const patchesFail = () => proxy.set({ kind: 'status', status: 400, methods: ['PATCH'], paths: /\/org\/members\// });

  it('the next run completes the create: the new hire ends suspended, and then nothing is left to do', async () => {
    const config = writeCsvConfig(dir, { baseUrl: proxy.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: hr-sync\n  policy: create-only' });
    patchesFail();
    const first = await cli('sync', '--config', config, '--output', 'json');
    expect(first.code).toBe(4);
    expect(await members()).toEqual({ u1: 'active', u2: 'active' });

    proxy.set(undefined);
    const plan = await cli('plan', '--config', config, '--output', 'json');
    const doc = JSON.parse(plan.stdout) as { changes: { id: string; op: string; fields: Record<string, unknown> }[]; withheld: unknown[] };
    expect(doc.changes.map((c) => [c.id, c.op, c.fields])).toEqual([['members:complete:u2', 'update', { status: 'suspended' }]]);
    expect(doc.withheld).toEqual([]);
    expect((await cli('sync', '--config', config)).code).toBe(0);
    expect(await members()).toEqual({ u1: 'active', u2: 'suspended' });
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(0);

    // Complete: a later suspension and re-activation of that member are ordinary updates again, held back.
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].map((m) => (m.source_id === 'u2' ? { ...m, status: 'active' } : m)) });
    const later = JSON.parse((await cli('plan', '--config', config, '--output', 'json')).stdout) as { changes: unknown[]; withheld: { id: string; why: string }[] };
    expect(later.changes).toEqual([]);
    expect(later.withheld.map((w) => [w.id, w.why])).toEqual([['members:update:u2', 'policy:create-only']]);
  });

  it('what the create owed is dropped once HR no longer asks for it: a later suspension is an update, held back', async () => {
    const config = writeCsvConfig(dir, { baseUrl: proxy.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: hr-sync\n  policy: create-only' });
    patchesFail();
    expect((await cli('sync', '--config', config)).code).toBe(4);
    proxy.set(undefined);
    // HR re-activates the new hire before the next run: nothing is owed any more, the run drops the note.
    const active = { ...TREE, members: [...TREE.members].map((m) => (m.source_id === 'u2' ? { ...m, status: 'active' as const } : m)) };
    writeCsvOrg(dir, active);
    const sync = await cli('sync', '--config', config, '--output', 'json');
    expect(sync.code).toBe(0);
    expect(JSON.parse(sync.stdout).result).toBe('in_sync');
    // HR suspends the member later: an update of an existing member, which create-only holds back.
    writeCsvOrg(dir, TREE);
    const plan = JSON.parse((await cli('plan', '--config', config, '--output', 'json')).stdout) as { changes: unknown[]; withheld: { id: string; why: string }[] };
    expect(plan.changes).toEqual([]);
    expect(plan.withheld.map((w) => [w.id, w.why])).toEqual([['members:update:u2', 'policy:create-only']]);
    expect(await members()).toEqual({ u1: 'active', u2: 'active' });
  });
});
