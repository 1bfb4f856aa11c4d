/**
 * Issue 15 point 5: blocked is not in sync. Source records the plan can neither create nor update
 * (not_owned_conflict, unpatchable drift, an e-mail shared with an unowned account) are listed by name in the text
 * and JSON summaries of plan and sync, `plan --detailed-exitcode` exits 5, and nothing says "in sync" meanwhile.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { metricsRunObserver } from '../../src/daemon/daemon.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org, SyncWorld } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [['eng', 'Engineering']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
    ['u3', 'Cid Moe', 'cid@acme.test', 'eng'],
  ],
});

let emulator: TestEmulator;
let dir: string;
let config: string;

async function api(method: string, path: string, body?: unknown): Promise<{ id: string; account_id: string }> {
  const res = await emulator.request(method, `/api/external/v1${path}`, { token: TEST_KEYS.acmeRw, ...(body !== undefined ? { body } : {}) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('blocked source records', () => {
  beforeEach(async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-blocked-');
    writeCsvOrg(dir, TREE);
    config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    // Made by hand: one carries u2's third id, one has u3's e-mail under no third id. Neither is this sync's.
    await api('POST', '/org/members', { display_name: 'Bob By Hand', email: 'bob.hand@acme.test', third_user_id: 'u2' });
    await api('POST', '/org/members', { display_name: 'Cid By Hand', email: 'cid@acme.test' });
  });
  afterEach(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('plan and sync list them by name, --detailed-exitcode exits 5, and nothing says "in sync" while they last', async () => {
    const plan = await cli('plan', '--config', config);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('\nblocked: 2\n');
    expect(plan.stdout).toMatch(/^ {2}x members u2: not_owned_conflict: member "Bob By Hand" with third_user_id u2 exists but is not owned by this sync/m);
    expect(plan.stdout).toMatch(/^ {2}x members u3: contact_not_owned: member u3: "Cid By Hand" with the same e-mail is already in the tenant/m);

    const sync = await cli('sync', '--config', config);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/^sync hr-sync: applied \(exit 0\)/);
    expect(sync.stdout).toContain(', blocked: 2, ');
    expect(sync.stdout).toMatch(/^ {2}x members u2: not_owned_conflict: /m);

    // Everything that could be applied was: the only thing between the platform and the sources is what is blocked.
    const again = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(again.code).toBe(5);
    expect(again.stdout).not.toContain('in sync');
    expect(again.stdout).toContain('No changes to apply, but 2 source record(s) are blocked (not created or updated).');
    const json = JSON.parse((await cli('plan', '--config', config, '--output', 'json')).stdout);
    expect(json.in_sync).toBe(false);
    expect(json.summary.blocked).toBe(2);
    expect(json.blocked).toEqual([
      expect.objectContaining({ entity: 'members', source_id: 'u2', reason: 'not_owned_conflict', platform_id: expect.any(String) }),
      expect.objectContaining({ entity: 'members', source_id: 'u3', reason: 'contact_not_owned', platform_id: expect.any(String) }),
    ]);

    const idle = await cli('sync', '--config', config);
    expect(idle.code).toBe(0);
    expect(idle.stdout).not.toContain('in sync');
    expect(idle.stdout).toMatch(/^sync hr-sync: nothing to apply, but source records are blocked \(exit 0\)/);
    const idleJson = JSON.parse((await cli('sync', '--config', config, '--output', 'json')).stdout);
    expect(idleJson.result).toBe('blocked');
    expect(idleJson.blocked.map((b: { source_id: string; reason: string }) => [b.source_id, b.reason])).toEqual([
      ['u2', 'not_owned_conflict'],
      ['u3', 'contact_not_owned'],
    ]);

    // An owned member whose e-mail changed in HR: the platform cannot patch it, so it is blocked too.
    writeCsvOrg(dir, org({ ...{ departments: [['eng', 'Engineering']] }, members: [['u1', 'Ann Lee', 'ann.lee@acme.test', 'eng'], ['u2', 'Bob Roy', 'bob@acme.test', 'eng'], ['u3', 'Cid Moe', 'cid@acme.test', 'eng']] }));
    const drift = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(drift.code).toBe(5);
    expect(drift.stdout).toContain('\nblocked: 3\n');
    expect(drift.stdout).toMatch(/^ {2}x members u1: unpatchable_drift: member u1: email "ann@acme.test" on the platform, "ann.lee@acme.test" in the source/m);
  });

  it('a plan with nothing blocked is in sync and --detailed-exitcode exits 0 (the blocked list is empty)', async () => {
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }));
    expect((await cli('sync', '--config', config)).code).toBe(0);
    const plan = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('No changes: the platform is in sync with the sources.');
    expect(plan.stdout).not.toContain('blocked');
    expect(JSON.parse((await cli('plan', '--config', config, '--output', 'json')).stdout)).toMatchObject({ in_sync: true, blocked: [] });
  });
});

describe('orgsync_blocked_records', () => {
  let world: SyncWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('counts the blocked records of the last plan by entity and reason, and drops them once resolved', async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.api('POST', '/org/members', { display_name: 'Bob By Hand', email: 'bob.hand@acme.test', third_user_id: 'u2' });
    await w.api('POST', '/org/members', { display_name: 'Cid By Hand', email: 'cid@acme.test' });
    const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
    const s = await w.run(TREE, {}, metricsRunObserver(metrics));
    expect(s.blocked.map((b) => [b.entity, b.sourceId, b.reason])).toEqual([
      ['members', 'u2', 'not_owned_conflict'],
      ['members', 'u3', 'contact_not_owned'],
    ]);
    let text = await metrics.text();
    expect(text).toContain('# TYPE orgsync_blocked_records gauge');
    expect(text).toContain('orgsync_blocked_records{entity="members",reason="not_owned_conflict"} 1');
    expect(text).toContain('orgsync_blocked_records{entity="members",reason="contact_not_owned"} 1');
    const desired = org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] });
    expect((await w.run(desired, {}, metricsRunObserver(metrics))).result).toBe('in_sync');
    text = await metrics.text();
    expect(text).not.toMatch(/^orgsync_blocked_records\{/m);
  });
});
