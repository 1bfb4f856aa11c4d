/** `orgsync plan` and `orgsync sync` through the CLI entry (main), against the emulator, with a CSV source. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [
    ['eng', 'Engineering'],
    ['eng-be', 'Backend', 'eng'],
    ['sales', 'Sales'],
    ['ops', 'Operations'],
  ],
  positions: [['p1', 'Engineer']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng-be'],
    ['u3', 'Cid Moe', 'cid@acme.test', 'ops'],
    ['u4', 'Dee Fox', 'dee@acme.test', 'sales'],
    ['u5', 'Eve Kim', 'eve@acme.test', 'sales'],
  ],
});

let emulator: TestEmulator;
let dir: string;
let config: string;

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-cli-');
  writeCsvOrg(dir, TREE);
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

const writes = (): Promise<number> => writeCalls(emulator);

describe('orgsync plan', () => {
  it('prints exactly one JSON document on stdout (logs on stderr) and writes nothing', async () => {
    const r = await cli('plan', '--config', config, '--output', 'json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.format_version).toBe(1);
    expect(doc.in_sync).toBe(false);
    expect(doc.summary.departments.create).toBe(4);
    expect(doc.summary.members.create).toBe(5);
    expect(doc.summary.positions.create).toBe(1);
    expect(doc.changes[0]).toMatchObject({ entity: 'positions', op: 'create', third_id: 'p1', request: { method: 'POST', path: '/org/positions' } });
    expect(r.stderr).toContain('plan computed');
    expect(await writes()).toBe(0);
  });

  it('prints a table per entity and operation with a summary line', async () => {
    const r = await cli('plan', '--config', config);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('departments create (4)');
    expect(r.stdout).toContain('members create (5)');
    expect(r.stdout).toMatch(/Plan: 10 to create, 0 to adopt, 0 to update, 0 to move, 0 to remove\./);
  });

  it('refuses an unknown --output and a bad config with exit 2', async () => {
    expect((await cli('plan', '--config', config, '--output', 'yaml')).code).toBe(2);
    const bad = await cli('plan', '--config', join(dir, 'missing.yaml'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^orgsync: cannot read config file/m);
  });
});

describe('orgsync sync', () => {
  it('applies, prints a summary, and is then in sync (plan --detailed-exitcode 0; before it, 5)', async () => {
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(5);
    const r = await cli('sync', '--config', config);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sync hr-sync: applied \(exit 0\)/);
    expect(r.stdout).toMatch(/members\s+5\s+0\s+0\s+0\s+0/);
    expect(r.stdout).toMatch(/API calls: \d+, 429s: 0/);
    const again = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No changes');
    const members = (await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[];
    expect(members.map((m) => m.third_user_id).filter(Boolean).sort()).toEqual(['u1', 'u2', 'u3', 'u4', 'u5']);
  });

  it('stops at the delete threshold with exit 3, the plan printed and nothing applied; --allow-deletes N lets it through', async () => {
    const cfg = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: hr-sync' });
    expect((await cli('sync', '--config', cfg)).code).toBe(0);
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].slice(0, 2) });
    const before = await writes();
    const refused = await cli('sync', '--config', cfg);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain('members remove (3)');
    expect(refused.stdout).toContain('REFUSED by delete_threshold');
    expect(refused.stderr).toMatch(/orgsync: the plan removes 3 of 5 owned members/);
    expect(await writes()).toBe(before);
    expect((await cli('sync', '--config', cfg, '--allow-deletes', '2')).code).toBe(3);
    const allowed = await cli('sync', '--config', cfg, '--allow-deletes', '3');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/members\s+0\s+0\s+0\s+0\s+3/);
    expect((await cli('sync', '--config', cfg, '--allow-deletes', 'many')).code).toBe(2);
  });

  it('--dry-run goes through the applier without writing, says so, and --output json prints one summary document', async () => {
    const r = await cli('sync', '--config', config, '--dry-run', '--output', 'json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ sync_id: 'hr-sync', result: 'dry_run', dry_run: true, exit_code: 0, failures: [], rate_limited: 0 });
    expect(doc.would_apply).toMatchObject({ total: 10, members: { create: 5 }, departments: { create: 4 }, positions: { create: 1 } });
    expect(doc.applied.members.create).toBe(5);
    expect(await writes()).toBe(0);
    const text = await cli('sync', '--config', config, '--dry-run');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^sync hr-sync: dry run, nothing written \(exit 0\)/);
    expect(text.stdout).toContain('\ndry run: 10 changes would be applied (nothing written)\n');
    expect(text.stdout).not.toMatch(/applied \(exit/);
    expect(await writes()).toBe(0);
    expect((await cli('plan', '--config', config, '--detailed-exitcode')).code).toBe(5);
    // The run history marks both rows as dry runs; nothing counts as a success.
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      const history = new RunHistory(db);
      expect(history.recent(10).map((r) => [r.result, (r.summary as { dry_run: boolean }).dry_run])).toEqual([
        ['dry_run', true],
        ['dry_run', true],
      ]);
      expect(history.lastWith(['success', 'partial'])).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('exits 4 when a record is quarantined, naming it in the summary', async () => {
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members, { source_id: 'u6', display_name: 'Bad Mail', email: 'not-an-email', status: 'active' }] });
    const r = await cli('sync', '--config', config);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/quarantined: 1/);
    expect(r.stdout).toMatch(/members u6 \(hr /);
  });

  it('reports a failed source read as exit 1 on one line', async () => {
    rmSync(join(dir, 'members.csv'));
    const r = await cli('sync', '--config', config);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^orgsync: source "hr"/m);
  });
});
