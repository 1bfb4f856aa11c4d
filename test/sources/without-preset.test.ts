/**
 * Two HR systems without a preset (issue 45's Tests), read with nothing but the configs of
 * docs/sources/without-a-preset.md: Gusto (an array of employees, page/per paging, the total in X-Total-Count, an
 * empty list past the last page) and ADP Workforce Now (`{workers}`, $top/$skip paging, 204 No Content past the last
 * worker, departments among organisational units of several types). Each vendor double on loopback serves its
 * recorded response (test/fixtures/vendors/<vendor>/, origin in SOURCE.md) plus generated workers up to 100, so the
 * documented page size divides the headcount and the walk meets the vendor's end of list.
 *
 * The loop of the page: `sources suggest` on a saved response proposes the documented mapping; then, as the world ten
 * days before today and as today, `sources preview`, `sources check`, `plan` and `sync` against the emulator, a second
 * `sync` that writes nothing, and `explain` of a leaver. Dates are written relative to the test's today (as in
 * test/sources/vendor-payloads.test.ts); `sources preview` judges them on the day served (`--today`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { PlatformDepartment, PlatformMember, PlatformPosition } from '../../src/domain/index.js';
import { systemClock } from '../../src/shared/clock.js';
import { runCli, writeCalls } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { Answer, resolvePayload, startVendor, type Route, type Vendor, type VendorAuth } from '../helpers/hr-vendor.js';
import { previewJson } from '../helpers/preview.js';
import { tempDir } from '../helpers/temp.js';
import { repoRoot } from '../daemon/support.js';
import { ADMIN } from '../e2e/harness.js';
import type { PreviewRecord } from '../../src/sources/preview/render.js';

const DAY = 86_400_000;
const TODAY = Math.floor(systemClock.now() / DAY) * DAY;
const FIXTURES = new URL('../fixtures/vendors/', import.meta.url);
/** The headcount served: the recorded people and generated ones, a multiple of the documented page size (100). */
const HEADCOUNT = 100;
const GIVEN = ['Avery', 'Blake', 'Casey', 'Devon', 'Emery', 'Finley', 'Gray', 'Harper', 'Indy', 'Jules', 'Kai', 'Lane', 'Morgan', 'Noel', 'Oakley', 'Parker', 'Quinn', 'Reese', 'Sage', 'Tatum'];
const FAMILY = ['Abbott', 'Bishop', 'Carver', 'Dalton', 'Ellison', 'Fairley', 'Garrison', 'Hollis', 'Ingram', 'Jarvis'];
const nameOf = (n: number) => [GIVEN[n % GIVEN.length]!, `${FAMILY[Math.floor(n / GIVEN.length) % FAMILY.length]!}`] as const;
const pad = (n: number) => String(n).padStart(4, '0');

/** The world served: its address and how many days before today it is. */
interface Served {
  base: string;
  shift: number;
}
const load = (file: string, s: Served): unknown => JSON.parse(resolvePayload(readFileSync(new URL(file, FIXTURES), 'utf8'), { today: TODAY, shift: s.shift, base: s.base }));
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Gusto: generated employees shaped as the recorded first one (no phone, no preferred name). */
function gustoEmployees(s: Served): Record<string, unknown>[] {
  const recorded = load('gusto/employees.json', s) as Record<string, unknown>[];
  const generated = Array.from({ length: HEADCOUNT - recorded.length }, (_, n) => {
    const e = clone(recorded[n % 2 === 0 ? 0 : 5]!);
    const [first, last] = nameOf(n);
    const uuid = `0c9f6e2a-4b1d-4e7a-9c3f-5a8b0d2e${pad(n)}`;
    const jobs = e.jobs as Record<string, unknown>[];
    jobs[0]!.uuid = `1d0a7f3b-5c2e-4f8b-8d4a-6b9c1e3f${pad(n)}`;
    jobs[0]!.employee_uuid = uuid;
    return { ...e, uuid, first_name: first, last_name: last, email: `${first}.${last}.${n}@mail.example`.toLowerCase(), work_email: `${first}.${last}.${n}@harborpt.example`.toLowerCase(), phone: null, employee_code: `g${pad(n)}` };
  });
  return [...recorded, ...generated];
}

/** ADP: generated workers shaped as the recorded first one (work e-mail only). */
function adpWorkers(s: Served): Record<string, unknown>[] {
  const recorded = (load('adp-workforce-now/workers.json', s) as { workers: Record<string, unknown>[] }).workers;
  const generated = Array.from({ length: HEADCOUNT - recorded.length }, (_, n) => {
    const w = clone(recorded[0]!) as Record<string, Record<string, unknown>>;
    const [given, family] = nameOf(n);
    w.person!.legalName = { givenName: given, familyName1: family, formattedName: `${family}, ${given}` };
    delete w.person!.communication;
    w.businessCommunication = { emails: [{ itemID: 'Business', nameCode: { codeValue: 'Work E-mail', shortName: 'Work E-mail' }, emailUri: `${given}.${family}.${n}@northwind-health.example`.toLowerCase() }] };
    return { ...w, associateOID: `G3GEN0000000${pad(n)}`, workerID: { idValue: `NWH9${pad(n)}` } };
  });
  return [...recorded, ...generated];
}

const COMPANY = 'c1f0a2d4-6b3e-4f21-9a8c-5d7e0b1c2a30';

/** One vendor of the page. */
interface Row {
  name: 'gusto' | 'adp';
  heading: string;
  /** The origins of the documented config, served here by the double. */
  origins: string[];
  env: Record<string, string>;
  auth: VendorAuth;
  tokenPath?: string;
  routes: (s: Served) => Record<string, Route>;
  /** What a user saves to try `sources suggest`: the first page of the API. */
  sample: (s: Served) => unknown;
  /** The API path each read walks, and the requests of one full read. */
  walkPath: string;
  fullRead: string[];
  recorded: { hire: string; leaver: string; neverCreated?: string; suspended?: string; preferred: [string, string]; legal: [string, string] };
  check: string;
  departments: (shift: number) => Record<string, string>;
  positions?: Record<string, string>;
}

const EG = (n: number) => `9d4e2b7${n}-5c1a-4e8f-b3d6-0f2a4c6e8b1${n}`;
const ADP = (n: number) => `G3Q7ZK2M1P8R4T0${n}`;

const ROWS: Row[] = [
  {
    name: 'gusto',
    heading: '## Worked example: Gusto',
    origins: ['https://api.gusto.com'],
    env: { GUSTO_COMPANY_UUID: COMPANY, GUSTO_TOKEN: 'gusto-access-token-1' },
    auth: { kind: 'bearer-static', token: 'gusto-access-token-1' },
    routes: (s) => ({
      [`/v1/companies/${COMPANY}/employees`]: (u) => {
        const page = Number(u.searchParams.get('page'));
        const per = Number(u.searchParams.get('per'));
        const all = gustoEmployees(s);
        // Past the last page: an empty list (and the total in the header, as on every page).
        return new Answer(200, all.slice((page - 1) * per, page * per), { 'X-Total-Count': String(all.length), 'X-Page': String(page), 'X-Per-Page': String(per) });
      },
    }),
    sample: (s) => gustoEmployees(s).slice(0, 25),
    walkPath: `/v1/companies/${COMPANY}/employees`,
    fullRead: [`/v1/companies/${COMPANY}/employees?page=1&per=100`, `/v1/companies/${COMPANY}/employees?page=2&per=100`],
    recorded: { hire: EG(4), leaver: EG(3), neverCreated: EG(5), preferred: [EG(2), 'Ale Jimenez'], legal: [EG(1), 'Dana Whitfield'] },
    check: 'source gusto (hris-json): 2 departments, 0 positions, 100 members, 0 quarantined',
    departments: (shift) => ({ '7a2f4c61-3d8e-4b90-a1c5-2e6f8d0b4a17': shift > 0 ? 'Physical Therapy' : 'Physiotherapy', 'b93e1d05-6c2a-4f7e-8d41-0a5c9e3f7b28': 'Front Desk' }),
  },
  {
    name: 'adp',
    heading: '## Worked example: ADP Workforce Now',
    origins: ['https://api.adp.com', 'https://accounts.adp.com'],
    env: { ADP_CLIENT_ID: 'orgsync-wfn', ADP_CLIENT_SECRET: 'adp-client-secret-1' },
    auth: { kind: 'oauth', clients: { 'orgsync-wfn': 'adp-client-secret-1' }, lifetimeSeconds: 3600 },
    tokenPath: '/auth/oauth/v2/token',
    routes: (s) => ({
      '/hr/v2/workers': (u) => {
        const skip = Number(u.searchParams.get('$skip'));
        const top = Number(u.searchParams.get('$top'));
        const page = adpWorkers(s).slice(skip, skip + top);
        // Past the last worker ADP answers 204 No Content.
        return page.length === 0 ? new Answer(204) : { workers: page };
      },
    }),
    sample: (s) => ({ workers: adpWorkers(s).slice(0, 25) }),
    walkPath: '/hr/v2/workers',
    fullRead: ['/hr/v2/workers?%24skip=0&%24top=100', '/hr/v2/workers?%24skip=100&%24top=100'],
    recorded: { hire: ADP(4), leaver: ADP(3), suspended: ADP(6), preferred: [ADP(2), 'Rob Jimenez'], legal: [ADP(1), 'Maya Okafor'] },
    check: 'source adp (hris-json): 3 departments, 4 positions, 100 members, 0 quarantined',
    departments: () => ({ '601000': 'Information Technology', '500': 'Physical Therapy', '701000': 'Sales' }),
    positions: { ITSA: 'Systems Analyst', PTL: 'Physical Therapist Lead', PT1: 'Physical Therapist', SLS: 'Account Manager' },
  },
];

/** The documented config of a worked example: the first YAML block after its heading. */
function documentedConfig(heading: string): string {
  const page = readFileSync(join(repoRoot, 'docs', 'sources', 'without-a-preset.md'), 'utf8');
  const at = page.indexOf(`\n${heading}\n`);
  expect(at, heading).toBeGreaterThan(0);
  return /```yaml\n([\s\S]*?)```/.exec(page.slice(at))![1]!;
}

/** The documented config written for this run: the vendor's origins are the double's, the environment holds the rest. */
function writeConfig(row: Row, vendor: Vendor): string {
  let yaml = documentedConfig(row.heading);
  for (const origin of row.origins) yaml = yaml.replaceAll(origin, vendor.base);
  const file = join(tempDir(`orgsync-no-preset-${row.name}-`), 'orgsync.yaml');
  writeFileSync(file, yaml);
  return file;
}

const cliEnv = (row: Row, emulator: TestEmulator) => ({ ...row.env, ORGSYNC_URL: emulator.url, ORGSYNC_API_KEY: TEST_KEYS.acmeRw });

async function platform(emulator: TestEmulator) {
  const get = async <T>(path: string) => {
    const r = await emulator.request('GET', `/api/external/v1/org/${path}?limit=200`, { token: TEST_KEYS.acmeRw });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.items as T[];
  };
  return {
    members: (await get<PlatformMember>('members')).filter((m) => m.third_user_id !== ''),
    // This sync's own (metadata.managed_by): the seed's departments and positions are someone else's.
    departments: (await get<PlatformDepartment>('departments')).filter((d) => d.metadata.managed_by === 'hr-sync' && d.status !== 'deleted'),
    positions: (await get<PlatformPosition>('positions')).filter((p) => p.metadata.managed_by === 'hr-sync' && p.status !== 'deleted'),
  };
}

describe('an HR API without a preset, with the configs of docs/sources/without-a-preset.md alone', () => {
  beforeAll(() => {
    for (const row of ROWS) expect(documentedConfig(row.heading)).toContain('sources:');
    // Every YAML block of the page is YAML (its quoting advice included), and the unquoted flow list it warns of is not.
    const page = readFileSync(join(repoRoot, 'docs', 'sources', 'without-a-preset.md'), 'utf8');
    const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    // A snippet indented as under `fields:` is read as it would stand there.
    for (const block of blocks) expect(() => parse(block.startsWith('        ') ? block.replace(/^ {8}/gm, '') : block), block).not.toThrow();
    expect(() => parse('email: [emails[0].value, userName]')).toThrow(/Missing , or : between flow sequence items/);
  });

  for (const row of ROWS) {
    it(`${row.name}: suggest proposes the documented mapping; preview, check, plan and sync read it right; a second sync writes nothing`, async () => {
      const served: Served = { base: '', shift: 10 };
      const vendor = await startVendor({ clock: systemClock, auth: row.auth, routes: row.routes(served), ...(row.tokenPath ? { tokenPath: row.tokenPath } : {}) });
      served.base = vendor.base;
      const emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
      try {
        const file = writeConfig(row, vendor);
        await expectSuggestion(row, served, file);
        for (const shift of [10, 0]) {
          served.shift = shift;
          const today = new Date(TODAY - shift * DAY).toISOString().slice(0, 10);
          await runOnce(row, { file, emulator, vendor, shift, today });
        }
      } finally {
        await emulator.close();
        await vendor.close();
      }
    });
  }
});

describe('a filter that matches nothing is named, per field, by sources check and sources preview', () => {
  it('the ADP config with the Department unit mistyped: both department fields say which filter matched no element', async () => {
    const row = ROWS.find((r) => r.name === 'adp')!;
    const served: Served = { base: '', shift: 0 };
    const vendor = await startVendor({ clock: systemClock, auth: row.auth, routes: row.routes(served), tokenPath: row.tokenPath! });
    served.base = vendor.base;
    try {
      const file = writeConfig(row, vendor);
      writeFileSync(file, readFileSync(file, 'utf8').replaceAll('[typeCode.codeValue=Department]', '[typeCode.codeValue=Dept]'));
      const env = { ...row.env, ORGSYNC_URL: 'https://platform.example/api', ORGSYNC_API_KEY: TEST_KEYS.acmeRw };
      const unit = 'workAssignments[primaryIndicator=true].homeOrganizationalUnits';
      const why = (leaf: string) => `"${unit}[typeCode.codeValue=Dept].nameCode.${leaf}": no element of ${unit} matches [typeCode.codeValue=Dept]`;
      const check = await runCli(['sources', 'check', '--config', file], env);
      expect(check.code).toBe(0);
      expect(check.stdout).toContain(
        [
          'fields that matched nothing: 2 (members.department, members.department_name)',
          `  members.department (source adp): matched nothing in the 100 records read: ${why('codeValue')}`,
          `  members.department_name (source adp): matched nothing in the 100 records read: ${why('shortName')}`,
          '',
        ].join('\n'),
      );
      const preview = await runCli(['sources', 'preview', '--config', file, '--limit', '3'], env);
      expect(preview.stdout).toContain(`\nwarning: members.department: matched nothing in the 3 records read: ${why('codeValue')}\n`);
    } finally {
      await vendor.close();
    }
  });
});

/** `sources suggest` on the first page saved to a file proposes what the page documents. */
async function expectSuggestion(row: Row, served: Served, file: string): Promise<void> {
  const sample = join(tempDir('orgsync-no-preset-sample-'), 'page.json');
  writeFileSync(sample, JSON.stringify(row.sample({ ...served, shift: 0 }), null, 2));
  const r = await runCli(['sources', 'suggest', '--sample', sample]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const proposed = parse(r.stdout) as { fields: Record<string, string | string[]>; status_map: Record<string, string> };
  const documented = (parse(readFileSync(file, 'utf8')) as { sources: { members: { fields: Record<string, string | string[]>; status_map: Record<string, string> } }[] }).sources[0]!.members;
  for (const [field, spec] of Object.entries(documented.fields)) {
    // The page keeps work phones only (a personal phone on the platform is the operator's call): a prefix of the proposal.
    if (field === 'phone' && Array.isArray(spec)) expect(proposed.fields.phone).toEqual(expect.arrayContaining(spec));
    else expect({ field, spec: proposed.fields[field] }).toEqual({ field, spec });
  }
  expect(proposed.status_map).toEqual(documented.status_map);
  // Everything the page maps was found: no closing list.
  expect(r.stdout).not.toContain('# found nothing for:');
}

interface RunContext {
  file: string;
  emulator: TestEmulator;
  vendor: Vendor;
  shift: number;
  today: string;
}

async function runOnce(row: Row, c: RunContext): Promise<void> {
  const env = cliEnv(row, c.emulator);
  const first = c.shift > 0;
  await expectPreview(row, c, env, first);

  c.vendor.requests.length = 0;
  const check = await runCli(['sources', 'check', '--config', c.file], env);
  expect(check.code, check.stdout + check.stderr).toBe(0);
  expect(check.stdout.split('\n')[1]).toBe(row.check);
  expect(check.stdout).toContain('quarantine: none\n');
  expect(check.stdout).not.toContain('fields that matched nothing');
  // The whole walk: one full page, then the vendor's end of the list (Gusto's empty list, ADP's 204).
  expect(c.vendor.requests.filter((q) => q.path === row.walkPath).map((q) => q.url)).toEqual(row.fullRead);

  const plan = JSON.parse((await runCli(['plan', '--config', c.file, '--output', 'json'], env)).stdout) as { lifecycle: Record<'scheduled' | 'ended' | 'ending', { third_id: string }[]> };
  expect(plan.lifecycle.scheduled.map((e) => e.third_id)).toEqual([row.recorded.hire]);
  expect(plan.lifecycle.ending.map((e) => e.third_id)).toEqual(first ? [row.recorded.leaver] : []);
  expect(plan.lifecycle.ended).toEqual([]);
  if (first) expect((await runCli(['plan', '--config', c.file], env)).stdout).toMatch(new RegExp(`\\nscheduled ends \\(1\\)\\n  < members ${row.recorded.leaver}: "[^"]+" ends \\d{4}-\\d\\d-\\d\\d; removed from `));

  const sync = await runCli(['sync', '--config', c.file], env);
  expect(sync.code, sync.stdout + sync.stderr).toBe(0);
  await expectPlatform(row, c, first);
  // The second sync finds the platform as the sources say: no writes.
  const writes = await writeCalls(c.emulator);
  const again = await runCli(['sync', '--config', c.file], env);
  expect(again.code).toBe(0);
  expect(await writeCalls(c.emulator)).toBe(writes);

  const leaver = first ? row.recorded.neverCreated : row.recorded.leaver;
  if (leaver !== undefined) {
    const why = await runCli(['explain', '--config', c.file, leaver], env);
    expect(why.code).toBe(0);
    expect(why.stdout).toMatch(/next plan: {2}nothing: not synced \(status left\): the source says status left and (no account is on the platform|the account has already left the platform); a leaver is never created/);
  }
}

async function expectPreview(row: Row, c: RunContext, env: Record<string, string>, first: boolean): Promise<void> {
  const doc = await previewJson(c.file, { today: c.today, limit: HEADCOUNT, env });
  const s = doc.sources[0]!;
  expect(s.records).toHaveLength(HEADCOUNT);
  expect(s.field_warnings).toEqual([]);
  const byId = (id: string): PreviewRecord => s.records.find((r) => r.fields.find((f) => f.field === 'id')?.read === id)!;
  const field = (r: PreviewRecord, name: string) => r.fields.find((f) => f.field === name);
  // A preferred first name where there is one, the legal one where there is none: never the last name alone.
  for (const [id, name] of [row.recorded.preferred, row.recorded.legal]) expect(field(byId(id), 'display_name')?.value).toBe(name);
  expect(field(byId(row.recorded.preferred[0]), 'display_name')?.from).toMatch(/^\{!/);
  // The department by its code, with its name beside it.
  const dept = field(byId(row.recorded.legal[0]), 'department');
  expect(Object.keys(row.departments(c.shift))).toContain(dept?.value);
  const deptName = row.departments(c.shift)[dept!.value as string];
  expect(field(byId(row.recorded.legal[0]), 'department_name')).toMatchObject({ value: deptName, read: deptName });
  // Locations show the page each record came from.
  expect(s.records[0]!.location).toMatch(row.name === 'adp' ? /\/hr\/v2\/workers\?%24skip=0&%24top=100#\$\.workers\[0\]$/ : /\/employees\?page=1&per=100#\$\[0\]$/);
  expect(byId(row.recorded.hire).lifecycle?.rule).toBe('scheduled');
  const leaver = byId(row.recorded.leaver);
  if (first) {
    expect(leaver.lifecycle?.rule).toBe('active');
    expect(leaver.lifecycle?.message).toMatch(/; end_date \d{4}-\d\d-\d\d is ahead: removed from /);
  } else {
    expect(leaver.lifecycle?.rule).toBe('left');
    const text = await runCli(['sources', 'preview', '--config', c.file, '--today', c.today, '--limit', '6'], env);
    expect(text.stdout).toContain('  lifecycle: not synced (status left): not created (a member of this sync already on the platform is removed (sync.member_removal: left))\n');
  }
}

async function expectPlatform(row: Row, c: RunContext, first: boolean): Promise<void> {
  const now = await platform(c.emulator);
  const live = now.members.filter((m) => m.status !== 'left');
  const status = new Map(live.map((m) => [m.third_user_id, m.status]));
  // Everyone but the future hire and the leavers; the one on leave suspended.
  expect(status.has(row.recorded.hire)).toBe(false);
  expect(status.has(row.recorded.leaver)).toBe(first);
  if (row.recorded.neverCreated) expect(status.has(row.recorded.neverCreated)).toBe(false);
  if (row.recorded.suspended) expect(status.get(row.recorded.suspended)).toBe('suspended');
  expect(live).toHaveLength(HEADCOUNT - 2 - (first ? 0 : 1) + (row.recorded.neverCreated ? 0 : 1));
  // Departments by code: renamed in place when the name changes (Gusto's second day), never created twice.
  expect(Object.fromEntries(now.departments.map((d) => [d.third_department_id, d.name]))).toEqual(row.departments(c.shift));
  if (row.positions) expect(Object.fromEntries(now.positions.map((p) => [p.third_position_id, p.name]))).toEqual(row.positions);
}
