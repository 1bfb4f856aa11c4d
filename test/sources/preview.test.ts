/**
 * `orgsync sources preview` end to end (issue 28 point 4): the first records of a CSV export, of a vendor's API served
 * on loopback with its pagination and auth (a preset), and of a real slapd, each shown beside what the mapping made
 * of it (field ← path or candidate), with the lifecycle rule of its dates on an injected day and the quarantine
 * reason; the read stops once it has the records (the vendor's requests are counted), and nothing is written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.js';
import { startVendor, type Vendor } from '../helpers/hr-vendor.js';
import { previewJson, runSourcesCli } from '../helpers/preview.js';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';
import { tempDir } from '../helpers/temp.js';

const VENDORS = new URL('../fixtures/vendors/', import.meta.url);
const LDAP_FIXTURES = new URL('../fixtures/ldap/', import.meta.url);

function writeConfig(dir: string, sources: string, sync = ''): string {
  const file = join(dir, 'orgsync.yaml');
  // No state: and a platform that does not exist: a preview that touched either would fail.
  writeFileSync(file, `platform:\n  base_url: http://127.0.0.1:1\n${sync}log:\n  level: silent\nsources:\n${sources}`);
  return file;
}

describe('sources preview of a CSV export', () => {
  const csvSource = `  - name: hr
    type: csv
    members:
      file: people.csv
      fields: { id: id, display_name: name, email: email, start_date: start, end_date: end }
`;
  // The fourth line is malformed: a read of the whole file fails on it, a preview of two records never reaches it.
  const people = 'id,name,email,start,end\nH1,Hana Future,Hana@Example.com,2026-12-27,\nB1,Bad Mail,not-an-address,,\nL1,Leo Left,leo@example.com,2020-01-01,2026-11-20\nX1,"broken\n';

  it('shows each record beside its mapping, a future hire as scheduled on the day given, and the quarantine reason', async () => {
    const dir = tempDir('orgsync-preview-');
    writeFileSync(join(dir, 'people.csv'), people);
    const config = writeConfig(dir, csvSource);
    const r = await runSourcesCli(['sources', 'preview', '--config', config, '--limit', '2', '--today', '2026-11-27']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'sources preview: source hr (csv), members, the first 2 records, dates judged on 2026-11-27',
        'people.csv:2: kept',
        '  raw: {"id":"H1","name":"Hana Future","email":"Hana@Example.com","start":"2026-12-27","end":""}',
        '  id: H1 ← id',
        '  display_name: Hana Future ← name',
        '  email: hana@example.com (read "Hana@Example.com") ← email',
        '  start_date: 2026-12-27 (2026-12-27T00:00:00.000Z) ← start',
        '  end_date: (empty) ← end',
        '  status: active ← (default: no status mapped)',
        '  lifecycle: scheduled: start_date 2026-12-27 is ahead: not created before 2026-12-27 (sync.lifecycle.create_days_before_start: 0)',
        'people.csv:3: quarantined',
        '  raw: {"id":"B1","name":"Bad Mail","email":"not-an-address","start":"","end":""}',
        '  id: "B1" ← id',
        '  display_name: "Bad Mail" ← name',
        '  email: "not-an-address" ← email',
        '  quarantined: invalid_email: invalid e-mail "not-an-address"',
        // A mapped column empty in both records read (issue 45).
        'warning: members.end_date: matched nothing in the 2 records read: "end": is empty or missing',
        'source hr: 2 records read: 1 kept, 1 quarantined, 0 out of scope',
        'nothing was written (no state DB, no platform call)',
        '',
      ].join('\n'),
    );
    // The whole file does not read (its fourth record is malformed): the preview stopped before it.
    const check = await runSourcesCli(['sources', 'check', '--config', config]);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain('people.csv:5:2 (line 5, column 2 "name"): the file ends inside a quoted field');
  });

  it('judges dates on the day given: create_days_before_start brings a hire forward, a passed end date ends a member', async () => {
    const dir = tempDir('orgsync-preview-');
    writeFileSync(join(dir, 'people.csv'), people.replace(/X1,"broken\n$/, ''));
    const config = writeConfig(dir, csvSource, 'sync:\n  id: hr-sync\n  lifecycle: { create_days_before_start: 14, end_action: suspend }\n');
    const doc = await previewJson(config, { today: '2026-12-15' });
    expect(doc.today).toBe('2026-12-15');
    const records = doc.sources[0]!.records;
    expect(records.map((x) => [x.location, x.outcome, x.lifecycle?.rule])).toEqual([
      ['people.csv:2', 'kept', 'active'],
      ['people.csv:3', 'quarantined', undefined],
      ['people.csv:4', 'kept', 'ended'],
    ]);
    expect(records[0]!.dates).toEqual({ start_date: { text: '2026-12-27', at: '2026-12-27T00:00:00.000Z' } });
    expect(records[2]!.lifecycle).toEqual({ rule: 'ended', message: 'end_date 2026-11-20 has passed: not created (a member already on the platform is suspended)' });
    expect(records[1]!.quarantine).toEqual({ reason: 'invalid_email', message: 'invalid e-mail "not-an-address"' });
    // Two weeks earlier the hire is still ahead of its creation day.
    const early = await previewJson(config, { today: '2026-12-01', limit: 1 });
    expect(early.sources[0]!.records[0]!.lifecycle).toEqual({
      rule: 'scheduled',
      create_on: '2026-12-13',
      message: 'start_date 2026-12-27 is ahead: not created before 2026-12-13 (sync.lifecycle.create_days_before_start: 14)',
    });
  });

  it('names the config and its sources for an unknown --source, and refuses a --limit that is not a count', async () => {
    const dir = tempDir('orgsync-preview-');
    writeFileSync(join(dir, 'people.csv'), people);
    const config = writeConfig(dir, csvSource);
    const unknown = await runSourcesCli(['sources', 'preview', '--config', config, '--source', 'payroll']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`orgsync: sources preview: ${config} has no source named "payroll" (its sources: hr); set --source to one of them\n`);
    const zero = await runSourcesCli(['sources', 'preview', '--config', config, '--limit', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toBe('orgsync: sources preview: --limit 0: give a number of records from 1 to 1000\n');
    const day = await runSourcesCli(['sources', 'preview', '--config', config, '--today', 'tomorrow']);
    expect(day.code).toBe(2);
    expect(day.stderr).toBe('orgsync: sources preview: --today: "tomorrow" is not a date: give an ISO date or date-time (e.g. --today 2026-11-27 or --today 2026-11-27T09:00:00Z)\n');
  });
});

describe('sources preview of a vendor API (SCIM preset, three pages of three)', () => {
  let vendor: Vendor;
  let config: string;
  beforeAll(async () => {
    let base = '';
    const page = (n: number) => JSON.parse(readFileSync(new URL(`scim/users-page-${n}.json`, VENDORS), 'utf8').replaceAll('{{BASE}}', base)) as unknown;
    vendor = await startVendor({
      clock: systemClock,
      auth: { kind: 'bearer-static', token: 'scim-token-value' },
      routes: { '/scim/v2/Users': (u) => page(Math.floor((Number(u.searchParams.get('startIndex')) - 1) / 3) + 1) },
    });
    base = `${vendor.base}/scim/v2`;
    const dir = tempDir('orgsync-preview-');
    config = writeConfig(
      dir,
      `  - name: okta
    preset: scim
    base_url: ${base}
    phone_region: US
    auth: { type: bearer, token: "\${SCIM_TOKEN}" }
    members:
      pagination: { type: scim, count: 3 }
`,
    );
  });
  afterAll(async () => {
    await vendor?.close();
  });

  it('shows which candidate of the preset gave each field, through the real auth', async () => {
    const r = await runSourcesCli(['sources', 'preview', '--config', config, '--limit', '1'], { SCIM_TOKEN: 'scim-token-value' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`sources preview: source okta (hris-json), members, the first 1 record, dates judged on ${new Date().toISOString().slice(0, 10)}`);
    // Locations show URLs as logs do: paging positions, no other query values (a next link may carry a token).
    expect(lines[1]).toBe(`${vendor.base}/scim/v2/Users?startIndex=1&count=3#$.Resources[0]: kept`);
    expect(lines).toEqual(
      expect.arrayContaining([
        '  id: 2819c223-7f76-453a-919d-413861904646 ← id',
        // display_name's first candidate gave it; e-mail's first (the primary address), not the home one listed first.
        '  display_name: Babs Jensen ← displayName',
        '  email: bjensen@example.com ← emails[primary=true].value',
        '  department_path: Tour Operations ← "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User".department',
        '  status: active (read "true") ← active',
      ]),
    );
    expect(vendor.requests.map((q) => q.headers.authorization)).toEqual(['Bearer scim-token-value']);
  });

  it('--limit 2 asks for the first page only; --limit 4 for two of the three pages', async () => {
    vendor.requests.length = 0;
    const two = await previewJson(config, { limit: 2, env: { SCIM_TOKEN: 'scim-token-value' } });
    expect(two.sources[0]!.records.map((x) => x.location.replace(vendor.base, ''))).toEqual([
      '/scim/v2/Users?startIndex=1&count=3#$.Resources[0]',
      '/scim/v2/Users?startIndex=1&count=3#$.Resources[1]',
    ]);
    expect(vendor.requests.map((q) => q.url)).toEqual(['/scim/v2/Users?startIndex=1&count=3']);

    vendor.requests.length = 0;
    const four = await previewJson(config, { limit: 4, env: { SCIM_TOKEN: 'scim-token-value' } });
    expect(four.sources[0]!.records).toHaveLength(4);
    expect(vendor.requests.map((q) => q.url)).toEqual(['/scim/v2/Users?startIndex=1&count=3', '/scim/v2/Users?startIndex=4&count=3']);
    const fourth = four.sources[0]!.records[3]!;
    expect(fourth.raw).toMatchObject({ id: '5d1f3a7e-8c2b-4f61-a0d9-3e7b2c1f0a9e', active: false });
    expect(fourth.fields.find((f) => f.field === 'status')).toEqual({ field: 'status', value: 'suspended', from: 'active', read: 'false' });
  });
});

const slapdHere = requireSlapd();

describe.skipIf(!slapdHere)('sources preview of an LDAP directory (real slapd)', () => {
  let slapd: Slapd;
  let config: string;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ file: new URL('openldap-corp.ldif', LDAP_FIXTURES).pathname }] });
    const dir = tempDir('orgsync-preview-');
    config = writeConfig(
      dir,
      `  - name: corp
    type: ldap
    url: ${slapd.url}
    bind_dn: ${slapd.rootDn}
    bind_password: \${LDAP_PASSWORD}
    base_dn: dc=example,dc=org
    phone_region: US
    page_size: 2
`,
    );
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it('shows attributes beside the mapping, and what the connector took from the DN and the account state', async () => {
    const env = { LDAP_PASSWORD: slapd.rootPassword };
    const r = await runSourcesCli(['sources', 'preview', '--config', config, '--limit', '2'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const ada = lines.indexOf('uid=ada,ou=Platform,ou=Engineering,dc=example,dc=org: kept');
    expect(ada).toBe(1);
    expect(lines.slice(ada + 2, ada + 8)).toEqual([
      '  id: ada ← uid',
      '  display_name: Ada King ← displayName',
      '  email: ada@example.org (read "ADA@example.org") ← mail',
      '  phone: +442079460958 (read "+44 20 7946 0958") ← telephoneNumber',
      '  title: Engineer ← title',
      expect.stringMatching(/^ {2}department: [0-9a-f-]{36} ← \(worked out by the connector: the DN, the account state\)$/),
    ]);
    expect(lines).toContain('  status: suspended ← (worked out by the connector: the DN, the account state)');
    expect(lines.filter((l) => l.endsWith(': kept'))).toEqual(['uid=ada,ou=Platform,ou=Engineering,dc=example,dc=org: kept', 'uid=alan,ou=Engineering,dc=example,dc=org: kept']);

    const all = await previewJson(config, { limit: 20, env });
    const quarantined = all.sources[0]!.records.filter((x) => x.outcome === 'quarantined').map((x) => [x.location, x.quarantine?.reason]);
    expect(quarantined.sort()).toEqual([
      ['cn=No Uid,ou=Sales,dc=example,dc=org', 'missing_id'],
      ['uid=badmail,ou=Sales,dc=example,dc=org', 'invalid_email'],
      ['uid=nocontact,ou=Sales,dc=example,dc=org', 'no_contact'],
    ]);
    expect(all.sources[0]!.records.find((x) => x.location.startsWith('uid=badmail'))!.fields.find((f) => f.field === 'email')).toEqual({ field: 'email', value: null, from: 'mail', read: 'not-an-address' });
  });
});
