/**
 * Presets against payloads shaped after responses published by others (issue 28 points 4 and 5): each vendor's
 * second recording (test/fixtures/vendors/<vendor>/, origin in its SOURCE.md) served by a vendor double on loopback
 * with that vendor's pagination and auth, read with nothing but `preset`, `base_url` and `auth` in the source, through
 * `orgsync sources preview`, `sources check`, `plan` and `sync` against the emulator (issue 28's Tests).
 *
 * Today: the CLI reads the real clock (its context has no clock), so the test injects "today" into the vendor
 * instead. Payload dates are written relative to the test's today (`{{date:+40}}`, `{{odata:-3}}`, ...) and the double
 * serves the world as of an earlier day by moving every relative date forward (`shift`): run 1 is ten days before
 * today (the leaver still works, the hire is 50 days out), run 2 is today (the leaver's last day was 3 days ago, the
 * hire 40 days ahead). Values that change with the day are `{{until:-3|Active|Inactive}}` (the first up to that day).
 * `sources preview` takes the day of the world served through `--today`, so its lifecycle rules judge the same day.
 *
 * One row per preset; each run walks the same steps (a table of steps): preview first, which must write nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { systemClock } from '../../src/shared/clock.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { resolvePayload, startVendor, type Route, type Vendor, type VendorAuth, type VendorRequest } from '../helpers/hr-vendor.js';
import { previewJson } from '../helpers/preview.js';
import type { PreviewRecord } from '../../src/sources/preview/render.js';
import { tempDir } from '../helpers/temp.js';

const DAY = 86_400_000;
/** The test's today: midnight UTC of the real date (the config's timezone is UTC). */
const TODAY = Math.floor(systemClock.now() / DAY) * DAY;
const FIXTURES = new URL('../fixtures/vendors/', import.meta.url);

/** What a route needs to serve a fixture as of the current run. */
interface Served {
  base: string;
  shift: number;
}
const load = (file: string, s: Served) => JSON.parse(resolvePayload(readFileSync(new URL(file, FIXTURES), 'utf8'), { today: TODAY, shift: s.shift, base: s.base })) as Record<string, unknown>;
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
    // The preset reads by delta (issue 31): `latest` gives a token of now; a later run's delta sends every user of
    // the world served as changed (whole), which is a valid delta answer and keeps the runs' expectations.
    '/v1.0/users/delta': (u) => {
      const token = u.searchParams.get('$deltatoken');
      const value = token === 'latest' ? [] : selectOnly(list(load('microsoft-graph/users-lifecycle.json', s), 'value'), u, ['id']);
      return { value, '@odata.deltaLink': new URL(`/v1.0/users/delta?$deltatoken=run-${s.shift}`, u).toString() };
    },
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
    // The preset reads by delta (issue 31): a later run hears that every employee of the world served changed, and
    // reads them again with the report (this double answers the whole report, whatever the ids asked for).
    '/api/gateway.php/acme/v1/employees/changed': (u) => {
      if (u.searchParams.get('since') === null) return undefined;
      const ids = list(load('bamboohr/custom-report.json', s), 'employees').map((e) => String((e as { id: unknown }).id));
      return { latest: new Date(TODAY).toISOString(), employees: Object.fromEntries(ids.map((id) => [id, { id, action: 'Updated', lastChanged: new Date(TODAY).toISOString() }])) };
    },
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

/** What `sources preview` shows of the payload, before check and sync run it. */
interface PreviewExpect {
  /** Ordinary records by source id: field -> [the mapped value, the path or candidate of the preset it came from]. */
  records: Record<string, Record<string, [string, string]>>;
  /** The future hire (vendors with a hire date): scheduled in both runs. */
  hire?: string;
  /** The leaver: active ten days before today; today `ended` by its leave date, or the status the vendor gives it. */
  leaver: string;
  leaves: 'ended' | 'left' | 'suspended';
  /** The API path whose requests a `--limit 1` preview must make fewer of than the full read (one preset). */
  limitPath?: string;
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
  preview: PreviewExpect;
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
    preview: {
      records: {
        [G(1)]: { display_name: ['Avery Quinn', 'displayName'], email: ['avery.quinn@fabrikam.example', 'mail'], phone: ['+12065550141', 'businessPhones[0]'], title: ['Store Manager', 'jobTitle'], department_path: ['Retail', 'department'], status: ['active', 'accountEnabled'], start_date: ['2019-03-04T00:00:00Z', 'employeeHireDate'] },
        // No mail: the e-mail is the fallback candidate, the sign-in name.
        [G(5)]: { email: ['tomas.berg@fabrikam.example', 'userPrincipalName'] },
      },
      hire: G(2),
      leaver: G(3),
      leaves: 'ended',
      // Two users a page, six users: the full read asks for three pages, the first record needs one.
      limitPath: '/v1.0/users',
    },
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
    preview: {
      records: {
        [S(1)]: { display_name: ['Hana Wright', 'displayName'], email: ['hwright@example.org', 'emails[primary=true].value'], phone: ['+12065550137', 'phoneNumbers[type=work].value'], title: ['Support Lead', 'title'], department_path: ['Customer Support', '"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User".department'], status: ['active', 'active'] },
        // No displayName and no emails: the name from its parts, the e-mail from userName (an address).
        [S(2)]: { display_name: ['Lena Meyer', '{name.givenName} {name.familyName}'], email: ['lena.meyer@example.org', 'userName'] },
      },
      leaver: S(3),
      leaves: 'suspended',
    },
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
    preview: {
      records: {
        '117530462014826100001': { display_name: ['Priya Raman', 'name.fullName'], email: ['priya@northwind.example', 'primaryEmail'], phone: ['+442079460101', 'phones[type=mobile].value'], title: ['Account Executive', 'organizations[primary=true].title'], department_path: ['Sales/EMEA', 'orgUnitPath'], status: ['active', '{suspended}/{archived}'] },
      },
      leaver: '117530462014826100003',
      leaves: 'suspended',
    },
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
      // One read for each of preview, check, plan and sync, in both runs.
      expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(8).fill('POST /api/gateway.php/acme/v1/reports/custom?format=JSON&onlyCurrent=false'));
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
    preview: {
      records: {
        '4': { display_name: ['Emma Larsen', '{firstName} {lastName}'], email: ['elarsen@efficientoffice.example', 'workEmail'], phone: ['+18015550104', 'mobilePhone'], title: ['HR Generalist', 'jobTitle'], department_path: ['Human Resources', 'department'], status: ['active', 'status'], start_date: ['2018-05-14', 'hireDate'] },
        // No mobile phone: the work phone, the preset's second candidate.
        '5': { phone: ['+18015550105', 'workPhone'] },
      },
      hire: '5',
      leaver: '6',
      leaves: 'left',
    },
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
    preview: {
      records: {
        '2001': { display_name: ['Jana Krüger', '{attributes.first_name.value} {attributes.last_name.value}'], email: ['jana.krueger@muster.example', 'attributes.email.value'], title: ['Controller', 'attributes.position.value'], department_path: ['Finance', 'attributes.department.value.attributes.name'], status: ['active', 'attributes.status.value'], start_date: ['2017-04-01T00:00:00+02:00', 'attributes.hire_date.value'] },
      },
      hire: '2002',
      leaver: '2003',
      leaves: 'left',
    },
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
    preview: {
      records: {
        '3490172255114061821': { display_name: ['Marta Silva', 'displayName'], email: ['marta.silva@bobco.example', 'email'], phone: ['+351912000111', 'work.mobilePhone'], title: ['Engineering Manager', 'work.title'], department_path: ['R&D', 'work.department'], status: ['active', 'internal.status'], start_date: ['2020-10-12', 'work.startDate'] },
        // A record with flat path keys: the same fields from the preset's other candidates.
        '3490172255114061826': { display_name: ['Rui Almeida', '"/root/displayName".value'], email: ['rui.almeida@bobco.example', '"/root/email".value'], phone: ['+351912345678', '"/work/mobilePhone".value'], title: ['Data Engineer', '"/work/title".humanReadable'], status: ['active', '"/internal/status".value'] },
      },
      hire: '3490172255114061825',
      leaver: '3490172255114061822',
      leaves: 'left',
    },
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
    preview: {
      records: {
        '30001': { display_name: ['Daniela Ruiz', 'Full_Name'], email: ['druiz@globex.example', 'Email'], department_path: ['Platform Engineering', 'Team_Name'], status: ['active', 'Active_Status'], start_date: ['2016-08-01-07:00', 'Start_Date'] },
      },
      hire: '30002',
      leaver: '30003',
      leaves: 'ended',
    },
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
    preview: {
      records: {
        lnguyen: { display_name: ['Linh Nguyen', 'displayName'], email: ['linh.nguyen@acmeglobal.example', 'email'], phone: ['+16105550151', 'businessPhone'], title: ['Payroll Lead', 'title'], department_path: ['Finance', 'department'], status: ['active', 'status'], start_date: ['2015-01-01', 'hireDate'] },
      },
      hire: 'pschmidt',
      leaver: 'rkhan',
      leaves: 'left',
    },
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
          const today = new Date(TODAY - shift * DAY).toISOString().slice(0, 10);
          for (const step of STEPS) await step.run({ row, file, emulator, vendor, want, today, first: shift > 0 });
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
  vendor: Vendor;
  want: Expect;
  /** The day of the world served (the `--today` of the preview); first: the run ten days before today. */
  today: string;
  first: boolean;
}

/** The steps of one run, in order. */
const STEPS: { name: string; run: (c: StepContext) => Promise<void> }[] = [
  {
    name: 'sources preview',
    run: async ({ row, file, emulator, vendor, want, today, first }) => {
      const members = async () => (await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw })).body.items as PlatformMember[];
      const onPlatform = await members();
      // Pages answered (a call refused for a revoked token is asked again with a new one: not a page more).
      const calls = () => vendor.requests.filter((r) => r.path === row.preview.limitPath).length - vendor.rejected;
      const callsBefore = calls();
      const doc = await previewJson(file, { today, limit: 20, env: row.env ?? {} });
      const fullReadCalls = calls() - callsBefore;
      // Nothing written: the platform's members as they were, and no state DB before the first sync.
      expect(await members()).toEqual(onPlatform);
      if (first) expect(existsSync(join(dirname(file), 'state.db'))).toBe(false);
      expect(doc.today).toBe(today);
      const records = doc.sources[0]!.records;
      expectPreviewCounts(records, want.check);
      const byId = (id: string) => {
        const found = records.find((r) => r.fields.find((f) => f.field === 'id')?.read === id);
        expect(found, `preview record ${id}`).toBeDefined();
        return found!;
      };
      // Every field of every record read names the path or candidate it came from.
      for (const r of records) for (const f of r.fields) expect(f.from, `${r.location} ${f.field}`).not.toBeNull();
      for (const [id, fields] of Object.entries(row.preview.records)) {
        const r = byId(id);
        expect(r.outcome).toBe('kept');
        expect(r.fields.find((f) => f.field === 'id')).toMatchObject({ value: id });
        expect(Object.fromEntries(r.fields.filter((f) => f.field in fields).map((f) => [f.field, [f.value, f.from]]))).toEqual(fields);
      }
      // Only what a person would set aside too (HiBob's record without a status).
      expect(records.filter((r) => r.outcome === 'quarantined').map((r) => [r.fields.find((f) => f.field === 'id')?.read, r.quarantine?.reason, r.quarantine?.message])).toEqual(row.quarantine ?? []);
      if (row.preview.hire !== undefined) {
        const hire = byId(row.preview.hire);
        const start = hire.dates?.start_date;
        expect(start).toBeDefined();
        expect(Date.parse(start!.at)).toBeGreaterThan(Date.parse(today));
        expect(hire.lifecycle).toMatchObject({ rule: 'scheduled', create_on: start!.at.slice(0, 10) });
      }
      expectLeaver(byId(row.preview.leaver), row.preview.leaves, first);
      if (row.preview.limitPath !== undefined) {
        const one = await previewJson(file, { today, limit: 1, env: row.env ?? {} });
        expect(one.sources[0]!.records.map((r) => r.location)).toEqual([records[0]!.location]);
        expect(calls() - callsBefore - fullReadCalls).toBe(1);
        expect(fullReadCalls).toBe(3);
      }
    },
  },
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

/** The preview read the payload whole: as many kept and out-of-scope records as `sources check` counts members. */
function expectPreviewCounts(records: PreviewRecord[], check: string): void {
  const count = (outcome: PreviewRecord['outcome']) => records.filter((r) => r.outcome === outcome).length;
  expect(count('kept')).toBe(Number(/, (\d+) members, /.exec(check)![1]));
  expect(count('excluded')).toBe(Number(/out of scope: (\d+) members/.exec(check)?.[1] ?? 0));
}

/**
 * The leaver ten days before today: active by status and dates. Today: ended by its leave date (the planner's
 * `ended` rule), or out by the status the vendor gives it, which decides alone (no dated rule, as `plan` shows).
 */
function expectLeaver(r: PreviewRecord, leaves: PreviewExpect['leaves'], first: boolean): void {
  expect(r.outcome).toBe('kept');
  const status = r.fields.find((f) => f.field === 'status');
  if (first || leaves === 'ended') expect(status?.value).toBe('active');
  if (first) expect(r.lifecycle?.rule).toBe('active');
  else if (leaves === 'ended') {
    expect(r.dates?.end_date).toBeDefined();
    expect(r.lifecycle?.rule).toBe('ended');
  } else if (leaves === 'left') {
    // Issue 45: a leaver is said to be one.
    expect(status?.value).toBe('left');
    expect(r.lifecycle?.rule).toBe('left');
    expect(r.lifecycle?.message).toMatch(/^not synced \(status left\): not created \(a member of this sync already on the platform is (removed|suspended) \(sync\.member_removal: (left|suspended)\)\)$/);
  } else {
    expect(status?.value).toBe(leaves);
    expect(r.lifecycle).toEqual({ rule: 'active', message: `no dated rule holds it back: synced with status ${leaves}` });
  }
}

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
