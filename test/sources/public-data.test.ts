/**
 * Small copies of public data (test/fixtures/public/, origins and licences in test/fixtures/README.md) read end to end: Oracle HR CSV snapshots, the BambooHR, Personio and Finch
 * payloads through the shipped example configs (served over loopback HTTP), and the OpenLDAP 999-person directory in
 * a real slapd. Each asserts the counts and the quarantine reasons the data yields.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { DesiredState } from '../../src/domain/desired.js';
import { readDesiredState } from '../../src/sources/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';
import { PUBLIC_DATA, instantClock, read } from './support.js';

const EXAMPLES = fileURLToPath(new URL('../../config/examples/', import.meta.url));
const HR = join(PUBLIC_DATA, 'oracle-hr');

/** Counts and quarantine reasons (entity:reason -> count). */
function summary(s: DesiredState) {
  const reasons: Record<string, number> = {};
  for (const q of s.quarantine) reasons[`${q.entity}:${q.reason}`] = (reasons[`${q.entity}:${q.reason}`] ?? 0) + 1;
  return { departments: s.departments.length, positions: s.positions.length, members: s.members.length, reasons };
}

const PERSONIO_MEMBERS = [
  ['2116366', 'Richard Stallman', 'rms@example.org', 'St. IGNUcius', undefined, 'active'],
  ['2116365', 'Alan Turing', 'alan@example.org', 'Chief Cryptanalyst', undefined, 'active'],
  ['2040614', 'Ada Lovelace', 'ada@example.org', 'first programmer ever', 'Operations', 'active'],
];

const oracle = (membersFile: string, extra: Record<string, string> = {}) => ({
  name: 'oracle',
  type: 'csv',
  phone_region: 'US',
  departments: { file: join(HR, 'departments.csv'), fields: { id: 'department_id', name: 'department_name' } },
  positions: { file: join(HR, 'jobs.csv'), fields: { id: 'job_id', name: 'job_title' } },
  members: { file: join(HR, membersFile), fields: { id: 'employee_id', display_name: '{first_name} {last_name}', email: '{email}@example.com', department: 'department_id', ...extra } },
});

describe('Oracle HR CSV', () => {
  it('snapshot A (2016-01-01): 27 departments, 19 jobs, 53 members, nothing quarantined', async () => {
    const s = await read([oracle('members_asof_2016-01-01.csv', { title: 'job_title' })]);
    expect(summary(s)).toEqual({ departments: 27, positions: 19, members: 53, reasons: {} });
    expect([...s.members].find((m) => m.source_id === '100')).toMatchObject({ display_name: 'Steven King', email: 'sking@example.com', title: 'President', department_source_id: '90', status: 'active' });
  });

  it('snapshot B (current): 107 members; the one without a department has none', async () => {
    const s = await read([oracle('members_current.csv', { title: 'job_title' })]);
    expect(summary(s)).toEqual({ departments: 27, positions: 19, members: 107, reasons: {} });
    expect([...s.members].filter((m) => m.department_source_id === undefined).map((m) => m.display_name)).toEqual(['Kimberely Grant']);
  });

  it('employees.csv with its phone numbers: 40 numbers are not valid NANP numbers; their phones are dropped, the members kept (phone_policy: drop)', async () => {
    const s = await read([oracle('employees.csv', { phone: 'phone_number' })]);
    expect(summary(s)).toEqual({ departments: 27, positions: 19, members: 107, reasons: {} });
    expect(s.warnings).toHaveLength(40);
    expect(s.warnings!.every((w) => w.code === 'invalid_phone_dropped')).toBe(true);
    expect(s.warnings![0]).toMatchObject({ source_id: '103', location: `${join(HR, 'employees.csv')}:5`, message: 'invalid phone "1.590.555.0103": phone dropped, the member is kept without it (phone_policy: drop)' });
    expect([...s.members].find((m) => m.source_id === '103')).toMatchObject({ display_name: 'Alexander James', email: 'ajames@example.com' });
    expect([...s.members].find((m) => m.source_id === '103')!.phone).toBeUndefined();
    expect([...s.members].find((m) => m.source_id === '100')!.phone).toBe('+15155550100');
  });

  it('employees.csv with phone_policy: quarantine: the 40 members are quarantined whole (the old behaviour)', async () => {
    const s = await read([{ ...oracle('employees.csv', { phone: 'phone_number' }), phone_policy: 'quarantine' }]);
    expect(summary(s)).toEqual({ departments: 27, positions: 19, members: 67, reasons: { 'members:invalid_phone': 40 } });
    expect(s.quarantine[0]).toMatchObject({ source_id: '103', location: `${join(HR, 'employees.csv')}:5`, message: 'invalid phone "1.590.555.0103"' });
    expect(s.warnings).toEqual([]);
  });

  it('test_db departments', async () => {
    const s = await read([{ name: 't', type: 'csv', departments: { file: join(PUBLIC_DATA, 'test-db-shape/departments.csv'), fields: { id: 'dept_no', name: 'dept_name' } } }]);
    expect(summary(s)).toEqual({ departments: 9, positions: 0, members: 0, reasons: {} });
    expect(s.provided).toEqual({ departments: true, positions: false, members: false });
  });
});

describe('HRIS payloads through the example configs', () => {
  let server: Server;
  let base: string;
  const seen: { url: string; auth: string | undefined }[] = [];
  beforeAll(async () => {
    const file = (p: string) => readFileSync(join(PUBLIC_DATA, 'hris', p), 'utf8');
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      seen.push({ url: req.url!, auth: req.headers.authorization });
      const json = (body: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      if (url.pathname === '/bamboohr/directory') return json(file('bamboohr/employees_custom_report.json'));
      if (url.pathname === '/personio/employees') {
        // Offset pagination over the recorded page: 3 employees, limit from the query.
        const doc = JSON.parse(file('personio/get-employees.json')) as { data: unknown[] };
        const offset = Number(url.searchParams.get('offset'));
        const limit = Number(url.searchParams.get('limit'));
        return json(JSON.stringify({ ...doc, data: doc.data.slice(offset, offset + limit) }));
      }
      if (url.pathname === '/finch/company') return json(file('finch/employer_company.json'));
      if (url.pathname === '/finch/directory') {
        const doc = JSON.parse(file('finch/employer_directory.json')) as { individuals: unknown[] };
        const offset = Number(url.searchParams.get('offset'));
        const limit = Number(url.searchParams.get('limit'));
        return json(JSON.stringify({ ...doc, individuals: doc.individuals.slice(offset, offset + limit) }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  /** Loads a shipped example with its URLs pointed at the loopback server. */
  async function example(name: string, urls: Record<string, string>, env: Record<string, string>, tweak = (t: string) => t): Promise<DesiredState> {
    let text = readFileSync(join(EXAMPLES, name), 'utf8');
    for (const [from, to] of Object.entries(urls)) text = text.replace(from, `${base}${to}`);
    const cfg = parseConfig(tweak(text), join(EXAMPLES, name), { ORGSYNC_API_KEY: 'ek_test', ...env });
    return readDesiredState(cfg, { env: {}, logger: silentLogger, clock: instantClock });
  }

  it('BambooHR: 103 employees; the recorded phones are "[REDACTED]": dropped, so the shared redacted e-mail decides', async () => {
    seen.length = 0;
    const s = await example('hris-bamboohr.yaml', { 'https://api.bamboohr.com/api/gateway.php/acme/v1/employees/directory': '/bamboohr/directory' }, { BAMBOOHR_BASIC_AUTH: 'a2V5Ong=' });
    // The same as without a phone mapping (next test): every phone is invalid and dropped (phone_policy: drop).
    expect(summary(s)).toEqual({ departments: 8, positions: 0, members: 17, reasons: { 'members:duplicate_email': 85, 'members:no_contact': 1 } });
    expect([...s.members].every((m) => m.phone === undefined && m.status === 'left')).toBe(true);
    expect(s.warnings!.length).toBe(s.members.length);
    expect(s.warnings![0]).toMatchObject({ source: 'bamboohr', entity: 'members', code: 'invalid_phone_dropped', message: 'invalid phone "[REDACTED]": phone dropped, the member is kept without it (phone_policy: drop)' });
    expect(s.departments.map((d) => d.name).sort()).toEqual(['Customer Success', 'Finance', 'Human Resources', 'IT', 'Marketing', 'Operations', 'Product', 'Sales']);
    expect(seen).toEqual([{ url: '/bamboohr/directory', auth: 'Basic a2V5Ong=' }]);
  });

  it('BambooHR with phone_policy: quarantine: the members with a "[REDACTED]" phone are quarantined whole', async () => {
    const s = await example('hris-bamboohr.yaml', { 'https://api.bamboohr.com/api/gateway.php/acme/v1/employees/directory': '/bamboohr/directory' }, { BAMBOOHR_BASIC_AUTH: 'a2V5Ong=' }, (t) =>
      t.replace(/^(\s+)type: hris-json$/m, '$1type: hris-json\n$1phone_policy: quarantine'),
    );
    expect(summary(s)).toEqual({ departments: 8, positions: 0, members: 1, reasons: { 'members:invalid_phone': 101, 'members:no_contact': 1 } });
    // The one without phones keeps its (redacted) e-mail: no other live member with it made it past its own checks.
    expect([...s.members].map((m) => [m.email, m.phone])).toEqual([['redacted@email.com', undefined]]);
    expect(s.quarantine[0]).toMatchObject({ source: 'bamboohr', entity: 'members', source_id: '4', reason: 'invalid_phone', message: 'invalid phone "[REDACTED]"', location: `${base}/bamboohr/directory#$.employees[0]` });
  });

  it('BambooHR without the phone mapping: the shared redacted e-mail quarantines the rest', async () => {
    const s = await example('hris-bamboohr.yaml', { 'https://api.bamboohr.com/api/gateway.php/acme/v1/employees/directory': '/bamboohr/directory' }, { BAMBOOHR_BASIC_AUTH: 'x' }, (t) =>
      t.replace(/^\s+phone: .*$/m, ''),
    );
    expect(summary(s)).toEqual({ departments: 8, positions: 0, members: 17, reasons: { 'members:duplicate_email': 85, 'members:no_contact': 1 } });
    expect([...s.members].every((m) => m.status === 'left')).toBe(true);
  });

  it('Personio: 3 employees over offset pages, departments derived from the members', async () => {
    seen.length = 0;
    const s = await example('hris-personio.yaml', { 'https://api.personio.de/v1/company/employees': '/personio/employees' }, { PERSONIO_TOKEN: 'papi-token' }, (t) => t.replace('size: 200', 'size: 2'));
    expect(summary(s)).toEqual({ departments: 1, positions: 0, members: 3, reasons: {} });
    expect([...s.members].map((m) => [m.source_id, m.display_name, m.email, m.title, m.department_source_id, m.status])).toEqual(PERSONIO_MEMBERS);
    expect(seen.map((r) => r.url)).toEqual(['/personio/employees?offset=0&limit=2', '/personio/employees?offset=2&limit=2']);
    expect(seen.every((r) => r.auth === 'Bearer papi-token')).toBe(true);
  });

  it('Finch: 5 departments in a tree; the directory has no contacts, so all 30 members are quarantined', async () => {
    const s = await example('hris-finch.yaml', { 'https://api.tryfinch.com/employer/company': '/finch/company', 'https://api.tryfinch.com/employer/directory': '/finch/directory' }, { FINCH_TOKEN: 't' });
    expect(summary(s)).toEqual({ departments: 5, positions: 0, members: 0, reasons: { 'members:no_contact': 30 } });
    expect(s.departments.map((d) => [d.source_id, d.parent_source_id])).toEqual([
      ['West Coast', undefined],
      ['Product', 'West Coast'],
      ['GTM', 'West Coast'],
      ['East Coast', undefined],
      ['Support', 'East Coast'],
    ]);
    expect(s.quarantine[0]).toMatchObject({ source: 'finch', source_id: '83d81888-5f7d-4326-b464-4a3fd718852a', reason: 'no_contact', location: `${base}/finch/directory?offset=0&limit=100#$.individuals[0]` });
  });
});

const run = requireSlapd();
describe.skipIf(!run)('OpenLDAP directory (a subset of its9282: 84 of its 999 people) in a real slapd', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=com'], ldif: [{ file: join(PUBLIC_DATA, 'ldap/its9282_exampledb.ldif') }] });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it('reads 11 OUs and 84 people with the openldap profile', async () => {
    const s = await read([{ name: 'example', type: 'ldap', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'dc=example,dc=com', phone_region: 'US' }]);
    // 20 telephoneNumbers are not valid NANP numbers (exchanges starting with 1, two-digit area codes): those members
    // are kept, with their mobile when it is valid. Four mail values contain spaces
    // ("Zsa zsa_Arnone@example.com"): those records are quarantined, the rest proceeds.
    expect(summary(s)).toEqual({ departments: 11, positions: 0, members: 80, reasons: { 'members:invalid_email': 4 } });
    // Of the 20 members whose telephoneNumber is invalid, 13 have a valid mobile (phone: [telephoneNumber, mobile]
    // takes the first VALID value); the other 7 have their phone dropped and are kept by their mail.
    expect(s.warnings!.map((w) => w.source_id)).toEqual(['Grant_Dransfield', 'Dimitri_Overby', 'Nike_Dorn', 'Marjan_Lukassen', 'Keven_Rychlicki', 'Donall_Rantala', 'Desire_Shames']);
    expect([...s.members].filter((m) => m.phone === undefined)).toHaveLength(7);
    const perDepartment = Object.fromEntries(s.departments.map((d) => [d.name, [...s.members].filter((m) => m.department_source_id === d.source_id).length]));
    expect(perDepartment).toEqual({ Accounting: 5, 'Product Development': 10, 'Product Testing': 9, 'Human Resources': 10, Payroll: 7, Janitorial: 9, Management: 2, Administrative: 11, Peons: 8, Planning: 9, KerberosPrincipals: 0 });
    expect(s.departments.every((d) => d.parent_source_id === undefined)).toBe(true);
    expect(s.warnings!.find((w) => w.source_id === 'Desire_Shames')).toMatchObject({ code: 'invalid_phone_dropped', location: 'cn=Desire Shames,ou=Product Testing,dc=example,dc=com', message: 'invalid phone "+1 804 126-3732": phone dropped, the member is kept without it (phone_policy: drop)' });
    // Her mobile "+1 71 159-1833" is invalid too; Katha Petree's telephoneNumber "+1 408 136-9364" is, her mobile not.
    expect([...s.members].find((m) => m.source_id === 'Desire_Shames')).toMatchObject({ email: 'desire_shames@example.com' });
    expect([...s.members].find((m) => m.source_id === 'Desire_Shames')!.phone).toBeUndefined();
    expect([...s.members].find((m) => m.source_id === 'Katha_Petree')?.phone).toBe('+15107293926');
    expect([...s.members].find((m) => m.source_id === 'Te-Wei_Menashian')).toMatchObject({ display_name: 'Te-Wei Menashian', email: 'te-wei_menashian@example.com', phone: '+18189366205', title: 'Senior Peons Sales Rep', status: 'active' });
  });
});

describe.skipIf(!run)('Apache Ranger AD-style directory (ADSchema.ldif) with the active-directory profile', () => {
  const base = 'DC=ranger,DC=qe,DC=hortonworks,DC=com';
  let slapd: Slapd;
  beforeAll(async () => {
    // The file's posixAccount entry lacks homeDirectory: loaded as-is, without schema checks.
    slapd = await startSlapd({ suffixes: [base], ldif: [{ file: join(PUBLIC_DATA, 'ldap/ADSchema.ldif') }], schemaCheck: false });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it('reads the OU tree and the people; without objectGUID or mail the ids and contacts are mapped from other attributes', async () => {
    const s = await read([
      {
        name: 'ad',
        type: 'ldap',
        profile: 'active-directory',
        url: slapd.url,
        bind_dn: slapd.rootDn,
        bind_password: slapd.rootPassword,
        base_dn: base,
        departments: { fields: { id: 'dn' } },
        members: { filter: '(&(objectClass=person)(sAMAccountName=*))', fields: { id: 'sAMAccountName', email: 'userPrincipalName' } },
      },
    ]);
    // Only 3 of the 13 people kept (of the file's 112) have a userPrincipalName; the platform needs an e-mail or a phone.
    expect(summary(s)).toEqual({ departments: 7, positions: 0, members: 3, reasons: { 'members:no_contact': 10 } });
    const hdp = [...s.members].find((m) => m.source_id === 'HdpUser1')!;
    expect(hdp).toMatchObject({ display_name: 'HdpUser1', email: 'hdpuser1@ranger.qe.hortonworks.com', status: 'active' });
    expect(hdp.department_source_id).toBe('ou=HadoopUsers,dc=ranger,dc=qe,dc=hortonworks,dc=com');
    expect(s.departments.find((d) => d.name === 'HdpGroups')!.parent_source_id).toBe('ou=HadoopUsers,dc=ranger,dc=qe,dc=hortonworks,dc=com');
  });
});
