/** orgsync explain, adopt and release through the CLI against the emulator (CSV source). */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformDepartment, PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { writeCsvConfig, writeCsvOrg } from '../e2e/csv-org.js';
import { ADMIN, org } from '../e2e/harness.js';
import { cli, writeCalls } from './cli.js';

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
  dir = mkdtempSync(join(tmpdir(), 'orgsync-explain-'));
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
    writeCsvOrg(dir, { ...TREE, members: TREE.members.map((m) => (m.source_id === 'u2' ? { ...m, display_name: 'Robert Roy' } : m)) });
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
    writeCsvOrg(dir, { ...TREE, members: TREE.members.map((m) => (m.source_id === 'u4' ? { ...m, display_name: 'Hank Handel' } : m)) });
    expect((await cli('sync', '--config', config)).code).toBe(0);
    expect((await member('u4'))?.display_name).toBe('Hank Handel');

    const released = await cli('release', '--config', config, 'hank@acme.test');
    expect(released.code).toBe(0);
    expect(released.stdout).toMatch(/Would release 1 record\(s\):\n {2}- members u4 "Hank Handel"/);
    expect(released.stdout).toContain('Released 1 record(s) (nothing on the platform was deleted).');
    // Released: the sync leaves it alone, even when it is gone from the source.
    writeCsvOrg(dir, { ...TREE, members: TREE.members.filter((m) => m.source_id !== 'u4') });
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
