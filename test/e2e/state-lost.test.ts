/**
 * Issue 15 point 2: the state-loss guard. After the state DB is lost, plan and sync refuse with `state_lost` (exit 3)
 * instead of pretending to start fresh; re-taking member ownership by third id lets runs proceed (a leaver no state
 * vouches for is reported by name as not owned), and restoring a backup instead recovers everything, leaver included.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { loadConfig } from '../../src/config/load.js';
import type { PlatformDepartment, PlatformMember, PlatformPosition } from '../../src/domain/index.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { calculatePlan, listMembers } from '../../src/planner/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, desiredOf, org, type OrgState } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [
    ['eng', 'Engineering'],
    ['ops', 'Operations'],
  ],
  positions: [['p1', 'Engineer']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
    ['u3', 'Cid Moe', 'cid@acme.test', 'ops'],
    ['u4', 'Dee Fox', 'dee@acme.test', 'ops'],
    ['u5', 'Eve Kim', 'eve@acme.test', 'ops'],
  ],
});
/** HR meanwhile: Bob is promoted, Eve left. */
const LATER: OrgState = { ...TREE, members: [...TREE.members].filter((m) => m.source_id !== 'u5') };
const REFUSAL =
  /^orgsync: the state DB has no record of earlier runs of sync\.id "hr-sync", but the platform already holds 2 departments and 1 position managed by it: the state DB was lost or recreated\. Member ownership, grace counters and source baselines live in the state DB, .* Either restore a backup \(orgsync state restore FILE\), or re-take ownership of the members whose third_user_id equals a source id \(orgsync adopt --match third-id --entity members\); then run again(?:; the plan is saved as pending approval sha256:[0-9a-f]{12} .*)?$/m;

let emulator: TestEmulator;
let dir: string;
let config: string;

const loseState = (): void => {
  for (const f of ['state.db', 'state.db-wal', 'state.db-shm']) rmSync(join(dir, f), { force: true });
};
async function liveMembers(): Promise<Map<string, PlatformMember>> {
  const res = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw });
  return new Map((res.body.items as PlatformMember[]).filter((m) => m.status !== 'left' && m.third_user_id).map((m) => [m.third_user_id, m]));
}

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-state-lost-');
  writeCsvOrg(dir, TREE);
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
  const first = await cli('sync', '--config', config);
  expect(first.stderr.split('\n').filter((l) => l.startsWith('orgsync:'))).toEqual([]);
  expect(first.code).toBe(0);
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('state_lost', () => {
  it('refuses plan, sync and the daemon run; adopt by third id lets the next run apply, and the leaver is reported by name as not owned', async () => {
    loseState();
    writeCsvOrg(dir, LATER, { u2: 'Lead' });
    const before = await writeCalls(emulator);

    const plan = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(plan.code).toBe(3);
    expect(plan.stderr).toMatch(REFUSAL);
    expect(plan.stdout).toContain('REFUSED by state_lost: ');
    const sync = await cli('sync', '--config', config, '--output', 'json');
    expect(sync.code).toBe(3);
    expect(sync.stderr).toMatch(REFUSAL);
    expect(JSON.parse(sync.stdout)).toMatchObject({ result: 'refused', exit_code: 3, refusal: { guard: 'state_lost' } });

    // The daemon: the run is refused, /status and the guard metric name the guard.
    const cap = captureContext();
    let url = '';
    const exit = daemonMain(loadConfig(config, {}), cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(30 * 60_000), onListening: (u) => (url = u) });
    try {
      await until('the listener', () => (url ? true : undefined));
      const [run] = await until('the daemon run', async () => {
        const runs = (await getJson(`${url}/status`)).body.runs as StatusRun[];
        return runs[0] && runs[0].result !== 'running' ? runs : undefined;
      });
      expect(run).toMatchObject({ trigger: 'start', result: 'guard', exitCode: 3 });
      expect(run!.summary).toMatchObject({ result: 'refused', refusal: { guard: 'state_lost' } });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toMatch(/^orgsync_guard_refusals_total\{[^}]*guard="state_lost"[^}]*\} 1$/m);
      expect(metrics).toMatch(/^orgsync_runs_total\{[^}]*result="guard"[^}]*\} 1$/m);
    } finally {
      cap.shutdown.abort(new Error('test over'));
      expect(await exit).toBe(0);
    }
    expect(await writeCalls(emulator)).toBe(before);

    const adopt = await cli('adopt', '--config', config, '--match', 'third-id', '--entity', 'members');
    expect(adopt.code).toBe(0);
    expect(adopt.stdout).toContain('Adopted 4 record(s).');
    expect(adopt.stdout).not.toContain('u5');

    const next = await cli('sync', '--config', config);
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/^sync hr-sync: applied \(exit 0\)/);
    expect(next.stdout).toMatch(/members\s+0\s+0\s+1\s+0\s+0/);
    expect(next.stdout).toContain('not owned, left alone: 1\n  members u5: member "Eve Kim" (third_user_id u5) is in no source but not owned by this sync (no state vouches for it): left alone; remove it by hand if the person left\n');
    const live = await liveMembers();
    expect(live.get('u2')?.title).toBe('Lead');
    expect(live.has('u5')).toBe(true);
    const json = JSON.parse((await cli('sync', '--config', config, '--output', 'json')).stdout);
    expect(json.result).toBe('in_sync');
    expect(json.not_owned).toEqual([expect.objectContaining({ entity: 'members', third_id: 'u5' })]);
  });

  it('restoring a backup instead recovers everything, the leaver included', async () => {
    const backup = await cli('state', 'backup', '--config', config, join(dir, 'backup.db'));
    expect(backup.code).toBe(0);
    loseState();
    writeCsvOrg(dir, LATER, { u2: 'Lead' });
    expect((await cli('plan', '--config', config)).code).toBe(3);
    const restore = await cli('state', 'restore', '--config', config, join(dir, 'backup.db'));
    expect(restore.code).toBe(0);
    const sync = await cli('sync', '--config', config);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/members\s+0\s+0\s+1\s+0\s+1/);
    expect(sync.stdout).not.toContain('not owned');
    const live = await liveMembers();
    expect(live.get('u2')?.title).toBe('Lead');
    expect(live.has('u5')).toBe(false);
    const again = await cli('plan', '--config', config, '--detailed-exitcode');
    expect(again.code).toBe(0);
  });

  it('a fresh tenant is not affected: nothing is managed by this sync.id yet', async () => {
    // The beforeEach's first sync ran with an empty state DB against a tenant with nothing managed: it applied.
    const otherDir = tempDir('orgsync-other-', dir);
    writeCsvOrg(otherDir, TREE);
    const other = writeCsvConfig(otherDir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: 'id: other-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }' });
    const plan = await cli('plan', '--config', other);
    expect(plan.code).toBe(0);
    expect(plan.stdout).not.toContain('state_lost');
  });
});

describe('stateLostGuard in the planner', () => {
  const root: PlatformDepartment = { id: 'd0', name: 'Acme', parent_id: '', third_department_id: '', depth: 0, path: '/Acme', sort_order: 0, status: 'active', metadata: {} } as unknown as PlatformDepartment;
  const managed = (id: string): PlatformDepartment => ({ ...root, id, name: id, parent_id: 'd0', third_department_id: id, depth: 1, path: `/Acme/${id}`, metadata: { managed_by: 'hr-sync' } }) as unknown as PlatformDepartment;
  const snapshot = (departments: PlatformDepartment[]) => ({ departments: [root, ...departments], positions: [] as PlatformPosition[], members: listMembers([] as PlatformMember[], new Map<string, string>()) });
  const opts = (stateKnown?: boolean) => ({ syncId: 'hr-sync', policy: 'sync' as const, memberRemoval: 'left' as const, deleteThreshold: { max_count: 500, max_percent: 20 }, adopt: { members: [], departments: [], positions: [] }, now: 0, ...(stateKnown !== undefined ? { stateKnown } : {}) });
  const desired = desiredOf(org({ departments: [['eng', 'Engineering']] }));

  it('refuses only when the state is unknown and something is managed by this sync.id', () => {
    expect(calculatePlan(desired, snapshot([managed('eng')]), opts(false)).refusal?.guard).toBe('state_lost');
    expect(calculatePlan(desired, snapshot([managed('eng')]), opts(false)).refusal?.message).toContain('the platform already holds 1 department managed by it');
    expect(calculatePlan(desired, snapshot([managed('eng')]), opts(true)).refusal).toBeUndefined();
    expect(calculatePlan(desired, snapshot([managed('eng')]), opts()).refusal).toBeUndefined();
    expect(calculatePlan(desired, snapshot([]), opts(false)).refusal).toBeUndefined();
  });
});
