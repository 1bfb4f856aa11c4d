/**
 * Presets against payloads shaped after responses published by others (issue 28 points 4 and 5): each vendor's
 * second recording (test/fixtures/vendors/<vendor>/, origin in its SOURCE.md) served by a vendor double on loopback
 * with that vendor's pagination and auth, read with nothing but `preset`, `base_url` and `auth` in the source, through
 * `orgsync sources check`, `plan` and `sync` against the emulator.
 *
 * Today: the CLI reads the real clock (its context has no clock), so the test injects "today" into the vendor
 * instead. Payload dates are written relative to the test's today (`{{date:+40}}`, `{{odata:-3}}`, ...) and the double
 * serves the world as of an earlier day by moving every relative date forward (`shift`): run 1 is ten days before
 * today (the leaver still works, the hire is 50 days out), run 2 is today (the leaver's last day was 3 days ago, the
 * hire 40 days ahead). Values that change with the day are `{{until:-3|Active|Inactive}}` (the first up to that day).
 *
 * One row per preset; each run walks the same steps (a table of steps, so `sources preview` can be one more).
 */
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { systemClock } from '../../src/shared/clock.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { startVendor, type Route, type Vendor, type VendorAuth, type VendorRequest } from '../helpers/hr-vendor.js';
import { tempDir } from '../helpers/temp.js';

const DAY = 86_400_000;
/** The test's today: midnight UTC of the real date (the config's timezone is UTC). */
const TODAY = Math.floor(systemClock.now() / DAY) * DAY;
const FIXTURES = new URL('../fixtures/vendors/', import.meta.url);

/** The fixture's text with its placeholders resolved for a world `shift` days before today. */
function resolve(text: string, shift: number, base: string): string {
  const at = (n: string) => TODAY + (Number(n) + shift) * DAY;
  const day = (n: string) => new Date(at(n)).toISOString().slice(0, 10);
  const happened = (n: string) => Number(n) + shift <= 0;
  return text
    .replaceAll('{{BASE}}', base)
    .replace(/"\{\{(since|until):([+-]?\d+)\}\}"/g, (_, k: string, n: string) => String(k === 'since' ? happened(n) : !happened(n)))
    .replace(/\{\{(since|until):([+-]?\d+)\|([^|}]*)\|([^}]*)\}\}/g, (_, k: string, n: string, a: string, b: string) => ((k === 'since') === happened(n) ? a : b))
    .replace(/\{\{date:([+-]?\d+)\}\}/g, (_, n: string) => day(n))
    .replace(/\{\{datetime:([+-]?\d+)\}\}/g, (_, n: string) => `${day(n)}T00:00:00Z`)
    .replace(/\{\{personio:([+-]?\d+)\}\}/g, (_, n: string) => `${day(n)}T00:00:00+01:00`)
    .replace(/\{\{odata:([+-]?\d+)\}\}/g, (_, n: string) => `/Date(${at(n)})/`);
}

/** What a route needs to serve a fixture as of the current run. */
interface Served {
  base: string;
  shift: number;
}
const load = (file: string, s: Served) => JSON.parse(resolve(readFileSync(new URL(file, FIXTURES), 'utf8'), s.shift, s.base)) as Record<string, unknown>;
const list = (o: unknown, key: string) => (o as Record<string, unknown[]>)[key]!;

/** OData's $select: the server returns only what was asked for (Graph, SuccessFactors). */
const selectOnly = (records: unknown[], url: URL, keep: string[]) => {
  const sel = url.searchParams.get('$select');
  if (sel === null) return records;
  const names = new Set([...sel.split(','), ...keep]);
  return records.map((r) => Object.fromEntries(Object.entries(r as Record<string, unknown>).filter(([k]) => names.has(k))));
};

/** Routes of each vendor double: the vendor's pagination over one recorded response. */
const ROUTES: Record<string, (s: Served) => Record<string, Route>> = {
  'microsoft-graph': (s) => ({
    '/v1.0/users': (u) => {
      const doc = load('microsoft-graph/users-lifecycle.json', s);
      const all = selectOnly(list(doc, 'value'), u, ['id']);
      const from = Number(u.searchParams.get('$skiptoken') ?? 0);
      const next = new URL(u);
      next.searchParams.set('$skiptoken', String(from + 2));
      return {
        '@odata.context': doc['@odata.context'],
        ...(from === 0 ? { '@odata.count': all.length } : {}),
        value: all.slice(from, from + 2),
        ...(from + 2 < all.length ? { '@odata.nextLink': next.toString() } : {}),
      };
    },
  }),
  scim: (s) => ({
    '/scim/v2/Users': (u) => {
      const doc = load('scim/users-list-response.json', s);
      const all = list(doc, 'Resources');
      const start = Number(u.searchParams.get('startIndex'));
      // A server may answer fewer than `count` (RFC 7644 3.4.2.4): this one pages by 2.
      const page = all.slice(start - 1, start - 1 + Math.min(2, Number(u.searchParams.get('count'))));
      return { ...doc, totalResults: all.length, startIndex: start, itemsPerPage: page.length, Resources: page };
    },
  }),
  'google-workspace': (s) => ({
    '/admin/directory/v1/users': (u) => {
      if (u.searchParams.get('customer') !== 'my_customer') return undefined;
      const doc = load('google-workspace/users-list.json', s);
      const all = list(doc, 'users');
      const token = u.searchParams.get('pageToken');
      const from = token === null ? 0 : Number(Buffer.from(token, 'base64url').toString());
      return { ...doc, users: all.slice(from, from + 2), ...(from + 2 < all.length ? { nextPageToken: Buffer.from(String(from + 2)).toString('base64url') } : {}) };
    },
  }),
  bamboohr: (s) => ({
    '/api/gateway.php/acme/v1/reports/custom': (u) => (u.searchParams.get('format') === 'JSON' ? load('bamboohr/custom-report.json', s) : undefined),
  }),
  personio: (s) => ({
    '/v1/company/employees': (u) => {
      const doc = load('personio/employees.json', s);
      const offset = Number(u.searchParams.get('offset'));
      const limit = Number(u.searchParams.get('limit'));
      const all = list(doc, 'data');
      return { ...doc, offset, limit, metadata: { total_elements: all.length, current_page: Math.floor(offset / limit), total_pages: Math.ceil(all.length / limit) }, data: all.slice(offset, offset + limit) };
    },
  }),
  hibob: (s) => ({ '/v1/people/search': () => load('hibob/people-search-mixed.json', s) }),
  'workday-raas': (s) => ({
    '/ccx/service/customreport2/globex/ISU_orgsync/Worker_Data': (u) => (u.searchParams.get('format') === 'json' ? load('workday-raas/custom-report-worker-data.json', s) : undefined),
  }),
  'sap-successfactors': (s) => ({
    '/odata/v2/User': (u) => {
      const doc = load('sap-successfactors/user-odata-v2.json', s) as { d: { results: unknown[] } };
      const all = selectOnly(doc.d.results, u, ['__metadata']);
      const from = Number(u.searchParams.get('$skiptoken') ?? 0);
      const next = new URL(u);
      next.searchParams.set('$skiptoken', String(from + 2));
      return { d: { __count: String(all.length), results: all.slice(from, from + 2), ...(from + 2 < all.length ? { __next: next.toString() } : {}) } };
    },
  }),
};

/** What one run should find. */
interface Expect {
  /** `sources check`: the source's line. */
  check: string;
  /** `plan --output json`: third ids scheduled and ended. */
  scheduled: string[];
  ended: string[];
  /** After `sync`: third_user_id -> status of the members this sync owns. */
  members: Record<string, string>;
}

/** One preset. */
interface Row {
  preset: string;
  auth: () => VendorAuth;
  tokenPath?: string;
  /** The source block: only preset, base_url and auth. */
  source: (base: string, v: Vendor) => string;
  env?: Record<string, string>;
  memberRemoval?: 'left' | 'suspended';
  /** Quarantine expected in every run (reason and message), besides nothing. */
  quarantine?: [string, string, string][];
  before: Expect;
  today: Expect;
  departments: string[];
  /** Checks of the requests the vendor saw (a POST's body). */
  requests?: (seen: VendorRequest[]) => void;
}

let saPublic: Awaited<ReturnType<typeof importSPKI>>;
let saPrivatePem = '';
const SA_EMAIL = 'orgsync@northwind-prod.iam.gserviceaccount.com';
const oauth = (clients: Record<string, string>, scope?: string): VendorAuth => ({ kind: 'oauth', clients, lifetimeSeconds: 3600, revokeAfterUses: 1, ...(scope ? { scope } : {}) });

const G = (n: number) => `5f3c9a0e-2b71-4d8e-9c64-0a1b2c3d4e0${n}`;
const S = (n: number) => `a1f0c2d4-000${n}-4e5b-9a10-3c2d1e0f010${n}`;

const ROWS: Row[] = [
  {
    preset: 'microsoft-graph',
    auth: () => oauth({ 'graph-app': 'graph-secret-value' }, 'https://graph.microsoft.com/.default'),
    source: (base, v) => `    preset: microsoft-graph
    base_url: ${base}
    auth: { type: oauth2-client-credentials, token_url: ${v.tokenUrl}, client_id: graph-app, client_secret: "\${GRAPH_SECRET}", scope: https://graph.microsoft.com/.default }
`,
    env: { GRAPH_SECRET: 'graph-secret-value' },
    before: {
      check: 'source hr (hris-json): 2 departments, 0 positions, 5 members, 0 quarantined, out of scope: 1 members',
      scheduled: [G(2)],
      ended: [],
      members: { [G(1)]: 'active', [G(3)]: 'active', [G(4)]: 'suspended', [G(5)]: 'active' },
    },
    today: {
      check: 'source hr (hris-json): 2 departments, 0 positions, 5 members, 0 quarantined, out of scope: 1 members',
      scheduled: [G(2)],
      ended: [G(3)],
      members: { [G(1)]: 'active', [G(4)]: 'suspended', [G(5)]: 'active' },
    },
    departments: ['Finance', 'Retail'],
  },
  {
    // SCIM has no hire or leave date (core schema and enterprise extension): leavers are seen by active: false.
    preset: 'scim',
    auth: () => ({ kind: 'bearer-static', token: 'scim-token-value' }),
    source: (base) => `    preset: scim
    base_url: ${base}/scim/v2
    auth: { type: bearer, token: "\${SCIM_TOKEN}" }
`,
    env: { SCIM_TOKEN: 'scim-token-value' },
    before: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: [],
      ended: [],
      members: { [S(1)]: 'active', [S(2)]: 'active', [S(3)]: 'active', [S(4)]: 'suspended', [S(5)]: 'active' },
    },
    today: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: [],
      ended: [],
      members: { [S(1)]: 'active', [S(2)]: 'active', [S(3)]: 'suspended', [S(4)]: 'suspended', [S(5)]: 'active' },
    },
    departments: ['Customer Support', 'Documentation', 'People'],
  },
  {
    // No hire date in the Directory API (without a custom schema): an archived leaver is suspended.
    preset: 'google-workspace',
    auth: () => ({ kind: 'oauth', lifetimeSeconds: 3600, revokeAfterUses: 1, jwt: { key: saPublic, issuer: SA_EMAIL, subject: 'admin@northwind.example', scope: 'https://www.googleapis.com/auth/admin.directory.user.readonly' } }),
    source: (base) => `    preset: google-workspace
    base_url: ${base}
    auth: { type: google-service-account, key_file: sa.json, subject: admin@northwind.example, scopes: [https://www.googleapis.com/auth/admin.directory.user.readonly] }
`,
    before: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: [],
      ended: [],
      members: { '117530462014826100001': 'active', '117530462014826100002': 'active', '117530462014826100003': 'active', '117530462014826100004': 'suspended', '117530462014826100005': 'active' },
    },
    today: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: [],
      ended: [],
      members: { '117530462014826100001': 'active', '117530462014826100002': 'active', '117530462014826100003': 'suspended', '117530462014826100004': 'suspended', '117530462014826100005': 'active' },
    },
    departments: ['Engineering', 'Sales', 'Sales/EMEA'],
  },
  {
    preset: 'bamboohr',
    memberRemoval: 'suspended',
    auth: () => ({ kind: 'basic', username: 'bamboo-api-key-2', password: 'x' }),
    source: (base) => `    preset: bamboohr
    base_url: ${base}/api/gateway.php/acme
    auth: { type: basic, username: "\${BAMBOO_KEY}", password: x }
`,
    env: { BAMBOO_KEY: 'bamboo-api-key-2' },
    requests: (seen) => {
      // A custom report of every employee (onlyCurrent=false), naming the fields it needs.
      // One read for each of check, plan and sync, in both runs.
      expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(6).fill('POST /api/gateway.php/acme/v1/reports/custom?format=JSON&onlyCurrent=false'));
      expect(JSON.parse(seen[0]!.body)).toEqual({ title: 'orgsync', fields: ['id', 'firstName', 'lastName', 'displayName', 'workEmail', 'mobilePhone', 'workPhone', 'jobTitle', 'department', 'status', 'hireDate', 'terminationDate'] });
      expect(seen[0]!.headers['content-type']).toBe('application/json');
    },
    before: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['5'],
      ended: [],
      members: { '4': 'active', '6': 'active', '8': 'active' },
    },
    today: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['5'],
      ended: [], // the status says Inactive: removed as a leaver, not as ended
      members: { '4': 'active', '6': 'suspended', '8': 'active' },
    },
    departments: ['Human Resources', 'Product', 'Sales'],
  },
  {
    preset: 'personio',
    auth: () => oauth({ 'personio-client': 'personio-secret-value' }),
    source: (base, v) => `    preset: personio
    base_url: ${base}
    auth: { type: oauth2-client-credentials, token_url: ${v.tokenUrl}, client_id: personio-client, client_secret: "\${PERSONIO_SECRET}" }
`,
    env: { PERSONIO_SECRET: 'personio-secret-value' },
    before: {
      check: 'source hr (hris-json): 4 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['2002'],
      ended: [],
      members: { '2001': 'active', '2003': 'active', '2005': 'suspended' },
    },
    today: {
      check: 'source hr (hris-json): 4 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['2002'],
      ended: [], // the status says Inactive: removed as a leaver, not as ended
      members: { '2001': 'active', '2005': 'suspended' },
    },
    departments: ['Engineering', 'Finance', 'Sales'],
  },
  {
    preset: 'hibob',
    auth: () => ({ kind: 'basic', username: 'SERVICE-5678', password: 'hibob-token-value' }),
    source: (base) => `    preset: hibob
    base_url: ${base}
    auth: { type: basic, username: SERVICE-5678, password: "\${BOB_TOKEN}" }
`,
    env: { BOB_TOKEN: 'hibob-token-value' },
    requests: (seen) => {
      const body = JSON.parse(seen[0]!.body) as { fields: string[]; showInactive: boolean; humanReadable: string };
      expect(body).toMatchObject({ showInactive: true, humanReadable: 'APPEND' });
      expect(body.fields).toEqual(expect.arrayContaining(['work.startDate', 'internal.status', 'internal.terminationDate']));
    },
    quarantine: [['3490172255114061824', 'missing_status', 'status: the record has no internal.status / "/internal/status".value; a record without a status is never taken as active: the service user needs read access to internal.status (its permission group in Bob: People\'s data, Internal, Status)']],
    before: {
      check: 'source hr (hris-json): 5 departments, 0 positions, 5 members, 1 quarantined',
      scheduled: ['3490172255114061825'],
      ended: [],
      members: { '3490172255114061821': 'active', '3490172255114061822': 'active', '3490172255114061826': 'active' },
    },
    today: {
      check: 'source hr (hris-json): 5 departments, 0 positions, 5 members, 1 quarantined',
      scheduled: ['3490172255114061825'],
      ended: [], // the status says Inactive: removed as a leaver, not as ended
      members: { '3490172255114061821': 'active', '3490172255114061826': 'active' },
    },
    departments: ['Customer Success', 'Product', 'R&D'],
  },
  {
    preset: 'workday-raas',
    memberRemoval: 'suspended',
    auth: () => ({ kind: 'basic', username: 'ISU_orgsync@globex', password: 'workday-password-2' }),
    source: (base) => `    preset: workday-raas
    base_url: ${base}/ccx/service/customreport2/globex/ISU_orgsync/Worker_Data
    auth: { type: basic, username: ISU_orgsync@globex, password: "\${WORKDAY_PASSWORD}" }
`,
    env: { WORKDAY_PASSWORD: 'workday-password-2' },
    before: {
      check: 'source hr (hris-json): 2 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['30002'],
      ended: [],
      members: { '30001': 'active', '30003': 'active', '30005': 'active' },
    },
    today: {
      check: 'source hr (hris-json): 2 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['30002'],
      ended: ['30003'],
      members: { '30001': 'active', '30003': 'suspended', '30005': 'active' },
    },
    departments: ['Payments', 'Platform Engineering'],
  },
  {
    // The User entity has hireDate but no end date: a leaver is seen by status f.
    preset: 'sap-successfactors',
    auth: () => ({ kind: 'basic', username: 'orgsync@ACMEGLOBAL', password: 'sf-password-2' }),
    source: (base) => `    preset: sap-successfactors
    base_url: ${base}
    auth: { type: basic, username: orgsync@ACMEGLOBAL, password: "\${SF_PASSWORD}" }
`,
    env: { SF_PASSWORD: 'sf-password-2' },
    before: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['pschmidt'],
      ended: [],
      members: { lnguyen: 'active', rkhan: 'active', ymori: 'active' },
    },
    today: {
      check: 'source hr (hris-json): 3 departments, 0 positions, 5 members, 0 quarantined',
      scheduled: ['pschmidt'],
      ended: [],
      members: { lnguyen: 'active', ymori: 'active' },
    },
    departments: ['Engineering', 'Finance', 'Sales'],
  },
];

describe('presets read payloads shaped after the vendors\' published responses, by preset, base_url and auth alone', () => {
  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    saPrivatePem = await exportPKCS8(privateKey);
    saPublic = await importSPKI(await exportSPKI(publicKey), 'RS256');
  });

  for (const row of ROWS) {
    it(`${row.preset}: hires scheduled, leavers gone by member_removal (${row.memberRemoval ?? 'left'}), nothing valid quarantined`, async () => {
      const served: Served = { base: '', shift: 10 };
      const vendor = await startVendor({ clock: systemClock, auth: row.auth(), routes: ROUTES[row.preset]!(served), tokenPath: row.preset === 'personio' ? '/v2/auth/token' : '/oauth2/token' });
      served.base = vendor.base;
      const emulator = await startTestEmulator(orgTestSeed());
      try {
        const file = writeConfig(row, vendor, emulator);
        for (const [shift, want] of [[10, row.before], [0, row.today]] as const) {
          served.shift = shift;
          for (const step of STEPS) await step.run({ row, file, emulator, want });
        }
        expectAuthenticated(vendor);
        row.requests?.(vendor.requests.filter((r) => r.method === 'POST' && !r.path.endsWith('/token')));
      } finally {
        await emulator.close();
        await vendor.close();
      }
    });
  }
});

/** What a step sees. */
interface StepContext {
  row: Row;
  file: string;
  emulator: TestEmulator;
  want: Expect;
}

/** The steps of one run, in order. */
const STEPS: { name: string; run: (c: StepContext) => Promise<void> }[] = [
  {
    name: 'sources check',
    run: async ({ row, file, want }) => {
      const r = await cliEnv(row.env ?? {}, 'sources', 'check', '--config', file);
      expect(r.stderr).toBe('');
      expect(r.stdout.split('\n')[1]).toBe(want.check);
      expect(r.code, r.stdout).toBe(row.quarantine ? 4 : 0);
      // Exactly the quarantine expected (reason and message), and no value dropped.
      const quarantined = [...r.stdout.matchAll(/^ {2}members "([^"]+)" \(source hr, [^)]*\): ([a-z_]+): (.*)$/gm)].map((m) => [m[1], m[2], m[3]]);
      expect(quarantined).toEqual(row.quarantine ?? []);
      expect(r.stdout).not.toContain('warnings:');
    },
  },
  {
    name: 'plan',
    run: async ({ row, file, want }) => {
      const r = await cliEnv(row.env ?? {}, 'plan', '--config', file, '--output', 'json');
      expect(r.stderr).toBe('');
      const doc = JSON.parse(r.stdout) as { lifecycle: { scheduled: { third_id: string }[]; ended: { third_id: string }[] }; quarantine?: { reason: string; message: string; source_id: string }[] };
      expect(doc.lifecycle.scheduled.map((e) => e.third_id).sort()).toEqual([...want.scheduled].sort());
      expect(doc.lifecycle.ended.map((e) => e.third_id).sort()).toEqual([...want.ended].sort());
    },
  },
  {
    name: 'sync',
    run: async ({ row, file, emulator, want }) => {
      const r = await cliEnv(row.env ?? {}, 'sync', '--config', file);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(row.quarantine ? 4 : 0);
      const members = ((await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[]).filter((m) => m.third_user_id !== '');
      expect(Object.fromEntries(members.map((m) => [m.third_user_id, m.status]))).toEqual(want.members);
      const departments = (await emulator.request('GET', '/api/external/v1/org/departments?limit=200', { token: TEST_KEYS.acmeRw })).body.items as { third_department_id: string }[];
      expect(departments.map((d) => d.third_department_id)).toEqual(expect.arrayContaining(row.departments));
    },
  },
];

/** The config: platform, state, sync and the one source with only preset, base_url and auth. */
function writeConfig(row: Row, vendor: Vendor, emulator: TestEmulator): string {
  const dir = tempDir(`orgsync-vendor-${row.preset}-`);
  writeFileSync(join(dir, 'sa.json'), JSON.stringify({ type: 'service_account', client_email: SA_EMAIL, private_key_id: 'k1', private_key: saPrivatePem, token_uri: vendor.tokenUrl }));
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(
    file,
    `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: ${row.preset}-sync\n  member_removal: ${row.memberRemoval ?? 'left'}\n  delete_threshold: { max_count: 500, max_percent: 100 }\nlog:\n  level: silent\nsources:\n  - name: hr\n${row.source(vendor.base, vendor)}`,
  );
  return file;
}

/** Every API call carried credentials. */
function expectAuthenticated(vendor: Vendor): void {
  const api = vendor.requests.filter((r) => r.path !== '/oauth2/token' && r.path !== '/v2/auth/token');
  expect(api.length).toBeGreaterThan(0);
  for (const r of api) expect(r.headers.authorization).toMatch(/^(Basic|Bearer) /);
}

/** The CLI in-process with an environment. */
async function cliEnv(env: Record<string, string>, ...args: string[]) {
  const { PassThrough } = await import('node:stream');
  const { main } = await import('../../src/cli/main.js');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await main(args, { env, stdout, stderr, shutdownSignal: new AbortController().signal, isTTY: false });
  return { code, stdout: out, stderr: err };
}
