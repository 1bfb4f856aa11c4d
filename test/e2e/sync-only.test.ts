/**
 * Issue 22 point 1: `orgsync sync --only SELECTOR` against the emulator: only the selected records and what they need
 * first are written (requests counted at the emulator), ownership still holds, and a selector matching nothing exits 2.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { tempDir } from '../helpers/temp.js';

const BASE = {
  departments: [['eng', 'Engineering']] as [string, string, string?][],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
  ] as [string, string, string, string?][],
};

let emulator: TestEmulator;
let dir: string;
let config: string;

/** Writes the emulator answered since the last reset: "METHOD route" per request. */
async function writes(): Promise<string[]> {
  const res = await emulator.request('GET', '/_emulator/requests', { token: ADMIN });
  return (res.body.requests as { method: string; route: string; count: number }[]).filter((r) => r.method !== 'GET').flatMap((r) => Array<string>(r.count).fill(`${r.method} ${r.route}`));
}
const resetRequests = async (): Promise<void> => {
  await emulator.request('DELETE', '/_emulator/requests', { token: ADMIN });
};
async function members(): Promise<{ third_user_id: string; display_name: string; status: string; department_id: string; email: string }[]> {
  const res = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw });
  return res.body.items;
}

describe('sync --only', () => {
  beforeEach(async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-only-');
    writeCsvOrg(dir, org(BASE));
    config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
    expect((await cli('sync', '--config', config)).code).toBe(0);
    await resetRequests();
  });
  afterEach(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a new hire in a new department: the department, then the member, nothing else (other pending changes stay)', async () => {
    writeCsvOrg(
      dir,
      org({
        departments: [['eng', 'Engineering Renamed'], ['ops', 'Operations'], ['sre', 'SRE', 'ops']],
        members: [
          ['u1', 'Ann Lee-Changed', 'ann@acme.test', 'eng'],
          ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
          ['u3', 'Nina New', 'nina@acme.test', 'sre'],
          ['u4', 'Otto Other', 'otto@acme.test', 'eng'],
        ],
      }),
    );
    const dry = await cli('sync', '--config', config, '--only', 'nina@acme.test', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('dry run: 3 changes would be applied (nothing written)');
    expect(await writes()).toEqual([]);

    const run = await cli('sync', '--config', config, '--only', 'u3');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('selected: 1 record(s)\n  members u3 "Nina New": create applied\n');
    expect(run.stdout).toContain('    needed first: departments ops: create applied\n');
    expect(run.stdout).toContain('    needed first: departments sre: create applied\n');
    // Exactly two department creates (parent first) and one member create: no rename, no u1 update, no u4.
    expect((await writes()).sort()).toEqual(['POST /api/external/v1/org/departments', 'POST /api/external/v1/org/departments', 'POST /api/external/v1/org/members']);
    const after = await members();
    expect(after.map((m) => m.third_user_id).filter((t) => t !== '').sort()).toEqual(['u1', 'u2', 'u3']);
    expect(after.find((m) => m.third_user_id === 'u1')?.display_name).toBe('Ann Lee');

    // The rest is still pending for a full run.
    const plan = JSON.parse((await cli('plan', '--config', config, '--output', 'json')).stdout);
    expect(plan.changes.map((c: { id: string }) => c.id).sort()).toEqual(['departments:update:eng', 'members:create:u4', 'members:update:u1']);
  });

  it('a leaver: only their removal is written', async () => {
    writeCsvOrg(dir, org({ departments: BASE.departments, members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng'], ['u9', 'Zed New', 'zed@acme.test', 'eng']] }));
    const run = await cli('sync', '--config', config, '--only', 'bob@acme.test', '--output', 'json');
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.selected).toEqual([expect.objectContaining({ selector: 'bob@acme.test', entity: 'members', third_id: 'u2', done: ['remove applied'], needed_first: [] })]);
    expect(await writes()).toHaveLength(1);
    const bob = (await members()).find((m) => m.email === 'bob@acme.test');
    expect(bob?.status).not.toBe('active');
    expect((await members()).some((m) => m.third_user_id === 'u9')).toBe(false);
  });

  it('a record blocked by ownership is reported and nothing is written', async () => {
    await emulator.request('POST', '/api/external/v1/org/members', { token: TEST_KEYS.acmeRw, body: { display_name: 'Hand Made', email: 'hand@acme.test', third_user_id: 'u5' } });
    await resetRequests();
    writeCsvOrg(dir, org({ departments: BASE.departments, members: [...BASE.members, ['u5', 'Hans Made', 'hans@acme.test', 'eng'], ['u6', 'Una Six', 'una@acme.test', 'eng']] }));
    const run = await cli('sync', '--config', config, '--only', 'u5');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}members u5 "Hans Made": blocked: not_owned_conflict: member "Hand Made" with third_user_id u5 exists but is not owned by this sync/m);
    expect(run.stdout).toContain(', blocked: 1, ');
    expect(await writes()).toEqual([]);
  });

  it('a selector that matches nothing exits 2 and says so; a department path selects the department', async () => {
    const none = await cli('sync', '--config', config, '--only', 'u1', '--only', 'nobody@acme.test');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('orgsync: --only "nobody@acme.test" matched no record: not a source id, e-mail or department path in the sources or on the platform');
    expect(await writes()).toEqual([]);

    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering'], ['be', 'Backend', 'eng']], members: BASE.members }));
    const path = await cli('sync', '--config', config, '--only', 'Engineering/Backend');
    expect(path.code).toBe(0);
    expect(path.stdout).toContain('  departments be "Backend": create applied\n');
    const inSync = await cli('sync', '--config', config, '--only', '/Engineering/Backend/');
    expect(inSync.stdout).toContain('  departments be "Backend": nothing to do: the platform already matches the sources\n');
    expect(await writes()).toEqual(['POST /api/external/v1/org/departments']);
  });

  it('a selector that can never match (empty, a bare @domain) exits 2 before any source is read', async () => {
    const empty = await cli('sync', '--config', config, '--only', '  ');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('orgsync: --only "  " is empty: give a source id, an e-mail or a department path\n');
    const at = await cli('sync', '--config', config, '--only', 'u1', '--only', '@acme.test');
    expect(at.code).toBe(2);
    expect(at.stderr).toBe('orgsync: --only "@acme.test" is not an e-mail address (one @ with a name before it and a domain after it)\n');
    expect(await writes()).toEqual([]);
  });
});
