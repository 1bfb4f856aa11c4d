/** orgsync explain, adopt and release through the CLI against the emulator (CSV source). */
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformDepartment, PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';
import { cli, writeCalls } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const TREE = org({
  departments: [['eng', 'Engineering']],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng'],
    ['u4', 'Hank Hand', 'hank@acme.test', 'eng'],
  ],
});

let emulator: TestEmulator;
let dir: string;
let config: string;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await emulator.request(method, `/api/external/v1${path}`, { token: TEST_KEYS.acmeRw, ...(body !== undefined ? { body } : {}) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}
const member = async (third: string): Promise<PlatformMember | undefined> =>
  (await api<{ items: PlatformMember[] }>('GET', '/org/members?limit=200')).items.find((m) => m.third_user_id === third);

beforeEach(async () => {
  emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
  dir = tempDir('orgsync-explain-');
  // Hank was added by hand before orgsync ran, with the third id the HR system uses.
  await api('POST', '/org/members', { display_name: 'Hank Hand', email: 'hank@acme.test', third_user_id: 'u4' });
  writeCsvOrg(dir, TREE);
  // A row the sync quarantines (a malformed e-mail).
  appendFileSync(join(dir, 'members.csv'), 'u9,Quin Broken,not-an-email,,eng,active\n');
  config = writeCsvConfig(dir, { baseUrl: emulator.url, apiKey: TEST_KEYS.acmeRw });
  expect((await cli('sync', '--config', config)).code).toBe(4);
});
afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('orgsync explain', () => {
  it('an owned member: source and mapped fields with their source, mirror, ownership since, next plan', async () => {
    const ann = await member('u1');
    const r = await cli('explain', '--config', config, 'u1');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`members u1 (platform id ${ann!.account_id})`);
    expect(r.stdout).toMatch(/ {2}source: {5}hr at \S*members\.csv:2/);
    expect(r.stdout).toMatch(/display_name +"Ann Lee" +from hr/);
    expect(r.stdout).toMatch(/email +"ann@acme\.test" +from hr/);
    expect(r.stdout).toMatch(/mirror: {5}account_id \S+, status active, display_name "Ann Lee"/);
    expect(r.stdout).toMatch(/ownership: {2}owned by hr-sync since \d{4}-\d\d-\d\dT[\d:.]+Z \(created by this sync\)/);
    expect(r.stdout).toContain('next plan:  nothing: the platform already matches the sources');
    // The same record by e-mail and by platform id.
    expect((await cli('explain', '--config', config, 'ANN@acme.test')).stdout).toContain(`members u1 (platform id ${ann!.account_id})`);
    expect((await cli('explain', '--config', config, ann!.account_id)).stdout).toContain('members u1 (platform id');
  });

  it('says what the next plan would do and why', async () => {
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].map((m) => (m.source_id === 'u2' ? { ...m, display_name: 'Robert Roy' } : m)) });
    const r = await cli('explain', '--config', config, 'u2');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('next plan:  update: update member "Bob Roy" (display_name) (why: display_name differs from the source)');
    const dept = (await api<{ items: PlatformDepartment[] }>('GET', '/org/departments?limit=200')).items.find((d) => d.third_department_id === 'eng')!;
    const d = await cli('explain', '--config', config, dept.id);
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('departments eng (platform id');
    expect(d.stdout).toMatch(/ownership: {2}owned by hr-sync \(metadata\.managed_by\) since \d{4}-\d\d-\d\dT[\d:.]+Z \(created by this sync/);
  });

  it('an unowned and a quarantined record are known (exit 0); an unknown key is NOT_FOUND (exit 1)', async () => {
    const hank = await cli('explain', '--config', config, 'hank@acme.test');
    expect(hank.code).toBe(0);
    expect(hank.stdout).toContain('members u4 (platform id');
    expect(hank.stdout).toContain('ownership:  not owned by hr-sync');
    expect(hank.stdout).toMatch(/next plan: {2}no write: not_owned_conflict: /);

    const broken = await cli('explain', '--config', config, 'u9');
    expect(broken.code).toBe(0);
    expect(broken.stdout).toMatch(/quarantined: hr at \S*members\.csv:5: \w+: /);
    expect(broken.stdout).toContain('mirror:     no record on the platform');

    const none = await cli('explain', '--config', config, 'nobody@acme.test');
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^orgsync: no record matches "nobody@acme\.test"/m);
  });
});

describe('orgsync adopt / release', () => {
  it('round trip: adopt by e-mail (dry run first), the next sync manages it; release gives it up without deleting it', async () => {
    const hankBefore = await member('u4');
    const before = await writeCalls(emulator);
    const dry = await cli('adopt', '--config', config, '--match', 'email', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Would adopt 1 record(s):');
    expect(dry.stdout).toMatch(/@ members u4 "Hank Hand" <hank@acme\.test> \(platform id \S+\): matched by email to source record u4/);
    expect(dry.stdout).toContain('Dry run: nothing changed.');
    expect((await cli('explain', '--config', config, 'u4')).stdout).toContain('not owned by hr-sync');

    const adopted = await cli('adopt', '--config', config, '--match', 'email');
    expect(adopted.code).toBe(0);
    expect(adopted.stdout).toContain('Adopted 1 record(s).');
    expect(adopted.stderr).toContain('record adopted');
    expect(await writeCalls(emulator)).toBe(before);
    expect((await cli('explain', '--config', config, 'u4')).stdout).toMatch(/owned by hr-sync since \S+ \(adopted, matched by email\)/);
    expect((await cli('adopt', '--config', config, '--match', 'email')).stdout).toBe('Nothing to adopt.\n');

    // Owned now: a change in the source reaches it.
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].map((m) => (m.source_id === 'u4' ? { ...m, display_name: 'Hank Handel' } : m)) });
    expect((await cli('sync', '--config', config)).code).toBe(0);
    expect((await member('u4'))?.display_name).toBe('Hank Handel');

    const released = await cli('release', '--config', config, 'hank@acme.test');
    expect(released.code).toBe(0);
    expect(released.stdout).toMatch(/Would release 1 record\(s\):\n {2}- members u4 "Hank Handel"/);
    expect(released.stdout).toContain('Released 1 record(s) (nothing on the platform was deleted).');
    // Released: the sync leaves it alone, even when it is gone from the source.
    writeCsvOrg(dir, { ...TREE, members: [...TREE.members].filter((m) => m.source_id !== 'u4') });
    const after = await cli('sync', '--config', config, '--output', 'json');
    expect(JSON.parse(after.stdout).applied.members.remove).toBe(0);
    const hankAfter = await member('u4');
    expect(hankAfter?.account_id).toBe(hankBefore?.account_id);
    expect(hankAfter?.status).toBe('active');
    expect((await cli('release', '--config', config, 'u4')).code).toBe(1);
  });

  it('departments: adopt by third id sets metadata.managed_by; release removes it; --match email is a usage error', async () => {
    const made = await api<PlatformDepartment>('POST', '/org/departments', { name: 'Sales', third_department_id: 'sales', metadata: { cost_center: '42' } });
    writeCsvOrg(dir, { ...TREE, departments: [...TREE.departments, { source_id: 'sales', name: 'Sales' }] });
    expect((await cli('adopt', '--config', config, '--entity', 'departments', '--match', 'email')).code).toBe(2);
    const r = await cli('adopt', '--config', config, '--entity', 'departments', '--match', 'third-id');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`@ departments sales /Acme/Sales (platform id ${made.id}): matched by third id to source record sales`);
    expect((await api<PlatformDepartment>('GET', `/org/departments/${made.id}`)).metadata).toEqual({ cost_center: '42', managed_by: 'hr-sync' });
    const rel = await cli('release', '--config', config, made.id, '--entity', 'departments');
    expect(rel.code).toBe(0);
    const back = await api<PlatformDepartment>('GET', `/org/departments/${made.id}`);
    expect(back.metadata).toEqual({ cost_center: '42' });
    expect(back.status).toBe('active');
  });
});

describe('orgsync adopt / release with a selector that matches more than one entity', () => {
  it('release 100 refuses (exit 2) and lists member 100 and department 100; --entity releases only the one named', async () => {
    writeCsvOrg(dir, { ...TREE, departments: [...TREE.departments, { source_id: '100', name: 'Hundred' }], members: [...TREE.members, { source_id: '100', display_name: 'Cent Man', email: 'cent@acme.test', department_source_id: 'eng', status: 'active' }] });
    expect((await cli('sync', '--config', config)).code).toBe(0);
    const cent = (await member('100'))!;
    const dept = (await api<{ items: PlatformDepartment[] }>('GET', '/org/departments?limit=200')).items.find((d) => d.third_department_id === '100')!;
    const before = await writeCalls(emulator);

    const r = await cli('release', '--config', config, '100');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `orgsync: "100" matches records of more than one entity (1 members, 1 departments); nothing was released. Name the entity with --entity members|departments:\n` +
        `  members 100 "Cent Man" <cent@acme.test> (platform id ${cent.account_id})\n` +
        `  departments 100 /Acme/Hundred (platform id ${dept.id})\n`,
    );
    expect(await writeCalls(emulator)).toBe(before);
    expect((await cli('explain', '--config', config, '100')).stdout).toMatch(/members 100 [\s\S]*owned by hr-sync since/);
    expect((await api<PlatformDepartment>('GET', `/org/departments/${dept.id}`)).metadata).toEqual({ managed_by: 'hr-sync' });

    const rel = await cli('release', '--config', config, '100', '--entity', 'departments');
    expect(rel.code).toBe(0);
    expect(rel.stdout).toContain('Released 1 record(s)');
    expect((await api<PlatformDepartment>('GET', `/org/departments/${dept.id}`)).metadata).toEqual({});
    expect((await cli('release', '--config', config, '100')).stdout).toMatch(/Would release 1 record\(s\):\n {2}- members 100 "Cent Man"/);
  });

  it('adopt --match third-id refuses (exit 2) when a member and a department match, and adopts only the --entity named', async () => {
    const dept = await api<PlatformDepartment>('POST', '/org/departments', { name: 'Seven', third_department_id: 'x7' });
    const seven = await api<PlatformMember>('POST', '/org/members', { display_name: 'Sev Hand', email: 'sev@acme.test', third_user_id: 'x7' });
    writeCsvOrg(dir, { ...TREE, departments: [...TREE.departments, { source_id: 'x7', name: 'Seven' }], members: [...TREE.members, { source_id: 'x7', display_name: 'Sev Hand', email: 'sev@acme.test', department_source_id: 'eng', status: 'active' }] });

    const r = await cli('adopt', '--config', config, '--match', 'third-id');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `orgsync: --match third-id matches records of more than one entity (2 members, 1 departments); nothing was adopted. Name the entity with --entity members|departments:\n`,
    );
    expect(r.stderr).toContain(`  members x7 "Sev Hand" <sev@acme.test> (platform id ${seven.account_id})\n`);
    expect(r.stderr).toContain(`  departments x7 /Acme/Seven (platform id ${dept.id})\n`);
    expect((await api<PlatformDepartment>('GET', `/org/departments/${dept.id}`)).metadata).toEqual({});

    const members = await cli('adopt', '--config', config, '--match', 'third-id', '--entity', 'members');
    expect(members.code).toBe(0);
    expect(members.stdout).toContain('Adopted 2 record(s).');
    expect((await api<PlatformDepartment>('GET', `/org/departments/${dept.id}`)).metadata).toEqual({});
    // Only departments match now: one entity, so no --entity is needed.
    const rest = await cli('adopt', '--config', config, '--match', 'third-id');
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain(`@ departments x7 /Acme/Seven (platform id ${dept.id}): matched by third id to source record x7`);
    expect((await api<PlatformDepartment>('GET', `/org/departments/${dept.id}`)).metadata).toEqual({ managed_by: 'hr-sync' });
  });
});

describe('orgsync explain on a merged record', () => {
  it('names the source each mapped field came from', async () => {
    writeFileSync(join(dir, 'titles.csv'), 'id,title\nu1,Staff Engineer\n');
    const merged = join(dir, 'merged.yaml');
    writeFileSync(
      merged,
      readFileSync(config, 'utf8').replace(
        'log:\n',
        `  - name: titles\n    type: csv\n    members: { file: titles.csv, fields: { id: id, display_name: id, title: title } }\nlog:\n`,
      ),
    );
    const r = await cli('explain', '--config', merged, 'u1');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/display_name +"Ann Lee" +from hr/);
    expect(r.stdout).toMatch(/title +"Staff Engineer" +from titles/);
  });
});
