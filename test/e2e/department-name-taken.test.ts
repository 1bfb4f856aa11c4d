/**
 * Issue 32 point 7: a second sync over the same department names as another sync's (or a department made by hand)
 * would create a second "Engineering" beside the first. Its plan says so (department_name_taken, not blocking) with the
 * existing department's id, its owner and the ways out; with sync.adopt.departments [name] it adopts instead.
 * Real emulator on loopback, the CLI in-process, CSV sources.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { cli } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';

const TREE = org({
  departments: [['eng', 'Engineering']],
  members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']],
});
const OTHER = org({
  departments: [
    ['ENG-2', 'Engineering'],
    ['OPS-2', 'Operations'],
  ],
  members: [['p1', 'Bob Roy', 'bob@acme.test', 'ENG-2']],
});

let emulator: TestEmulator;

/** A folder with the CSV org and a config for the sync `syncBody`. */
function syncDir(desired: typeof TREE, syncBody: string): string {
  const dir = tempDir('orgsync-name-taken-');
  writeCsvOrg(dir, desired);
  return writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw, sync: syncBody });
}

async function departments(): Promise<{ id: string; name: string; path: string; metadata: Record<string, unknown> }[]> {
  const res = await emulator.request('GET', '/api/external/v1/org/departments', { token: TEST_KEYS.acmeRw });
  return res.body.items;
}

describe('a department create beside a department of the same name that is not this sync\'s', () => {
  beforeEach(async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  });
  afterEach(async () => {
    await emulator.close();
  });

  it('the second sync\'s plan warns with the id and owner of the first sync\'s department; adopting by name removes the create and the warning', async () => {
    const first = syncDir(TREE, 'id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }');
    expect((await cli('sync', '--config', first)).code).toBe(0);
    const eng = (await departments()).find((d) => d.name === 'Engineering' && d.metadata.managed_by === 'hr-sync')!;
    expect(eng).toBeDefined();
    // Made by hand: nobody's.
    const res = await emulator.request('POST', '/api/external/v1/org/departments', { token: TEST_KEYS.acmeRw, body: { name: 'Operations ', parent_id: '' } });
    expect(res.status).toBe(201);
    const opsByHand = res.body as { id: string; path: string };

    const second = syncDir(OTHER, 'id: payroll-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }');
    const plan = await cli('plan', '--config', second);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(
      `  ! department_name_taken departments ENG-2: department ENG-2 ("Engineering") would be created under "/Acme" beside department ${eng.id} ("/Acme/Engineering") of the same name, owned by sync hr-sync; ` +
        'to have one department, adopt it (sync.adopt.departments: [name], once sync hr-sync has released it with `orgsync release`), rename it in the source, or scope this sync under a department of its own (sync.root_department)\n',
    );
    const json = JSON.parse((await cli('plan', '--config', second, '--output', 'json')).stdout);
    const taken = json.warnings.filter((w: { code: string }) => w.code === 'department_name_taken');
    expect(taken.map((w: { third_id: string; platform_id: string }) => w.third_id)).toEqual(['ENG-2', 'OPS-2']);
    expect(taken[0].platform_id).toBe(eng.id);
    expect(taken[1].platform_id).toBe(opsByHand.id);
    expect(taken[1].message).toContain(`beside department ${opsByHand.id} ("${opsByHand.path}") of the same name, owned by no sync; to have one department, adopt it (sync.adopt.departments: [name]), rename`);
    expect(json.blocked).toEqual([]);
    expect(json.changes.filter((c: { op: string; entity: string }) => c.entity === 'departments').map((c: { id: string }) => c.id)).toEqual(['departments:create:ENG-2', 'departments:create:OPS-2']);

    // Adopting by name takes the department nobody owns: no create of it, no warning about it.
    const adopting = syncDir(OTHER, 'id: payroll-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  adopt: { departments: [name] }');
    const adopted = JSON.parse((await cli('plan', '--config', adopting, '--output', 'json')).stdout);
    const ops = adopted.changes.find((c: { id: string }) => c.id === 'departments:adopt:OPS-2');
    expect(ops?.platform_id).toBe(opsByHand.id);
    expect(adopted.changes.map((c: { id: string }) => c.id)).not.toContain('departments:create:OPS-2');
    expect(adopted.warnings.filter((w: { code: string }) => w.code === 'department_name_taken').map((w: { third_id: string }) => w.third_id)).toEqual(['ENG-2']);
  });
});
