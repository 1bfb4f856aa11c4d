/**
 * The active-directory profile on a real Active Directory (issue 43 point 1): a private Samba 4 AD domain controller
 * (test/helpers/samba.ts), the emulator in-process, and `orgsync sync` run as users run it, the built CLI
 * (node dist/cli.js) with the docs' own Active Directory example (docs/sources/ldap.md) as its source: LDAPS with
 * the DC's CA and tls_server_name, the nested-group filter (LDAP_MATCHING_RULE_IN_CHAIN), disabled and expired
 * accounts; StartTLS; a read of more than AD's 1,000 entries a page; the uSNChanged delta after a modify, a move, a
 * rename, a delete and group-scope changes, each followed by a full read that must find the platform in sync; and a
 * bind account that may not read uSNChanged.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { CLI, ensureBuilt, repoRoot } from '../helpers/build.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { AD_BASE, AD_PASSWORD, requireSamba, startSamba, unicodePwd, type SambaDc } from '../helpers/samba.js';
import { tempDir } from '../helpers/temp.js';

const run = requireSamba();

const STAFF = `OU=Staff,${AD_BASE}`;
const ENG = `OU=Engineering,${STAFF}`;
const SALES = `OU=Sales,${STAFF}`;
const GROUPS = `OU=Groups,${AD_BASE}`;
const SERVICE = `OU=Service Accounts,${AD_BASE}`;
const BULK = `OU=Bulk,${AD_BASE}`;
/** 2020-01-01 as a FILETIME: an account that expired then. */
const EXPIRED_2020 = '132223104000000000';
/** userAccountControl: a normal account that needs no password (staff here never bind), enabled or disabled. */
const ENABLED = 544;
const DISABLED = 546;

interface Person {
  cn: string;
  ou: string;
  sam: string;
  title: string;
  department: string;
  uac?: number;
  expires?: string;
}

const PEOPLE: Person[] = [
  { cn: 'Ada Lovelace', ou: ENG, sam: 'ada', title: 'Engineer', department: 'Engineering' },
  { cn: 'Bob Babbage', ou: ENG, sam: 'bob', title: 'Analyst', department: 'Engineering' },
  { cn: 'Cy Hopper', ou: ENG, sam: 'cy', title: 'SRE', department: 'Engineering/Platform' },
  { cn: 'Dee Noether', ou: SALES, sam: 'dee', title: 'Account Manager', department: 'Sales' },
  { cn: 'Eve Disabled', ou: SALES, sam: 'eve', title: 'Sales Rep', department: 'Sales', uac: DISABLED },
  { cn: 'Fay Expired', ou: SALES, sam: 'fay', title: 'Sales Rep', department: 'Sales', expires: EXPIRED_2020 },
  { cn: 'Gus Outside', ou: SALES, sam: 'gus', title: 'Contractor', department: 'Sales' },
  { cn: 'Hal Nested', ou: ENG, sam: 'hal', title: 'Engineer', department: 'Engineering' },
];
const dnOf = (p: Pick<Person, 'cn' | 'ou'>) => `CN=${p.cn},${p.ou}`;
const mailOf = (sam: string) => `${sam}@corp.example.test`;

function personLdif(p: Person): string {
  const [given, sn] = p.cn.split(' ');
  const lines = [`dn: ${dnOf(p)}`, 'objectClass: user', `sAMAccountName: ${p.sam}`, `givenName: ${given}`, `sn: ${sn}`, `displayName: ${p.cn}`, `mail: ${mailOf(p.sam)}`, `title: ${p.title}`, `department: ${p.department}`];
  lines.push(`userAccountControl: ${p.uac ?? ENABLED}`);
  if (p.expires) lines.push(`accountExpires: ${p.expires}`);
  return lines.join('\n');
}

const ou = (dn: string) => `dn: ${dn}\nobjectClass: organizationalUnit\nou: ${/^OU=([^,]+)/.exec(dn)![1]}`;
const byName = (cn: string) => PEOPLE.find((p) => p.cn === cn)!;

/** The directory: staff in an OU tree, nested groups (Staff holds Engineering Staff), two service accounts, 1,100 bulk users. */
function directoryLdif(): string {
  const service = (cn: string, upn: string) =>
    `dn: CN=${cn},${SERVICE}\nobjectClass: user\nsAMAccountName: ${cn}\nuserPrincipalName: ${upn}\nunicodePwd:: ${unicodePwd(AD_PASSWORD)}\nuserAccountControl: 66048`;
  const group = (cn: string, members: string[]) => `dn: CN=${cn},${GROUPS}\nobjectClass: group\nsAMAccountName: ${cn}\n${members.map((m) => `member: ${m}`).join('\n')}`;
  const bulk = Array.from({ length: 1100 }, (_, i) => {
    const n = String(i).padStart(4, '0');
    return `dn: CN=Bulk ${n},${BULK}\nobjectClass: user\nsAMAccountName: bulk${n}\ndisplayName: Bulk ${n}\nmail: bulk${n}@corp.example.test\nuserAccountControl: ${ENABLED}`;
  });
  return [
    ...[STAFF, ENG, `OU=Platform,${ENG}`, SALES, GROUPS, SERVICE, BULK].map(ou),
    ...PEOPLE.map((p) => personLdif({ ...p, ou: p.department === 'Engineering/Platform' ? `OU=Platform,${ENG}` : p.ou })),
    service('orgsync', 'orgsync@corp.example.test'),
    service('orgsync-limited', 'orgsync-limited@corp.example.test'),
    group('Engineering Staff', ['Ada Lovelace', 'Bob Babbage', 'Cy Hopper', 'Hal Nested'].map((cn) => dnOf(placed(byName(cn))))),
    group('Staff', [`CN=Engineering Staff,${GROUPS}`, ...['Dee Noether', 'Eve Disabled', 'Fay Expired'].map((cn) => dnOf(byName(cn)))]),
    ...bulk,
  ].join('\n\n');
}
/** Where a person is put at the start (Cy in Platform). */
const placed = (p: Person): Person => (p.department === 'Engineering/Platform' ? { ...p, ou: `OU=Platform,${ENG}` } : p);

/** The docs' Active Directory example, as written, with this DC's address and CA. */
function docsExample(dc: SambaDc): string {
  const doc = readFileSync(join(repoRoot, 'docs', 'sources', 'ldap.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Worked example: Active Directory'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
  expect(yaml).toContain('url: ldaps://192.0.2.10:636');
  expect(yaml).toContain('ca_file: /etc/orgsync/ad-ca.pem');
  return yaml.replace('url: ldaps://192.0.2.10:636', `url: ${dc.ldapsUrl}`).replace('ca_file: /etc/orgsync/ad-ca.pem', `ca_file: ${dc.caFile}`);
}

describe.skipIf(!run)('Active Directory (Samba 4 AD DC) through the built orgsync', () => {
  let dc: SambaDc;
  let emulator: TestEmulator;
  let dir: string;
  const env = { LDAP_PASSWORD: AD_PASSWORD };

  beforeAll(async () => {
    ensureBuilt();
    const started = Date.now();
    dc = await startSamba({ ldif: directoryLdif() });
    const loaded = Date.now();
    // A deny ACE, inherited by the staff entries: orgsync-limited may not read uSNChanged there.
    const sid = dc.tool(['user', 'show', 'orgsync-limited', '--attributes=objectSid']).match(/objectSid: (S-[\d-]+)/)![1];
    const usnChangedGuid = 'bf967a6f-0de6-11d0-a285-00aa003049e2'; // attributeSchemaIDGUID of uSNChanged (MS-ADA3)
    dc.tool(['dsacl', 'set', `--objectdn=${STAFF}`, '--action=deny', `--sddl=(OD;CI;RP;${usnChangedGuid};;${sid})`]);
    console.log(`Samba AD DC provisioned, started and loaded with ${PEOPLE.length + 1100 + 2} users in ${loaded - started} ms, its ACL set in ${Date.now() - loaded} ms`);
    emulator = await startTestEmulator(orgTestSeed());
    dir = tempDir('orgsync-samba-sync-');
  }, 180_000);
  afterAll(async () => {
    await dc?.stop();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Writes a config syncing `source` (YAML under `sources:`) with its own state DB and sync id. */
  function config(name: string, sources: string): string {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./${name}.db\nsync:\n  id: ${name}\nlog:\n  level: silent\n${sources}`);
    return file;
  }

  /** `node dist/cli.js <args>` in the test folder with `env` only (and PATH). */
  function orgsync(args: string[], extraEnv: Record<string, string> = env): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  interface SyncDoc {
    result: string;
    source_reads?: { source: string; mode: string; reason: string; records_read: number }[];
    would_apply?: { total: number; members?: Record<string, number> };
  }
  async function sync(file: string, ...flags: string[]): Promise<{ code: number | null; doc: SyncDoc; stderr: string }> {
    const r = await orgsync(['sync', '--config', file, '--output', 'json', ...flags]);
    return { code: r.code, doc: JSON.parse(r.stdout || '{}') as SyncDoc, stderr: r.stderr };
  }
  /** A full read that must find the platform as the delta left it. */
  async function fullReadAgrees(file: string): Promise<void> {
    const full = await sync(file, '--full-read', '--dry-run');
    expect([full.code, full.stderr, full.doc.result]).toEqual([0, '', 'in_sync']);
    expect(full.doc.source_reads?.map((s) => [s.mode, s.reason])).toEqual([['full', '--full-read']]);
  }

  /** The managed members on the platform by e-mail: status, title and department name. */
  async function platform(): Promise<Record<string, string>> {
    const members = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw });
    const departments = await emulator.request('GET', '/api/external/v1/org/departments?limit=200', { token: TEST_KEYS.acmeRw });
    const deptName = new Map((departments.body.items as { id: string; name: string }[]).map((d) => [d.id, d.name]));
    const out: Record<string, string> = {};
    for (const m of members.body.items as (PlatformMember & { email?: string; department_id?: string })[]) {
      if (m.third_user_id === '' || m.status === 'left') continue;
      out[m.email ?? m.third_user_id] = `${m.status} ${m.title ?? ''} @${deptName.get(m.department_id ?? '') ?? '-'}`;
    }
    return out;
  }

  const docsConfig = () => join(dir, 'docs.yaml');

  it('syncs the docs example over LDAPS with the DC\'s CA: nested groups, a disabled account suspended, an expired one left out', async () => {
    const file = config('docs', docsExample(dc));
    const first = await sync(file);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.doc.source_reads).toEqual([{ source: 'ad', mode: 'full', reason: 'first read', records_read: 7 }]);
    expect(file).toBe(docsConfig());
    expect(await platform()).toEqual({
      'ada@corp.example.test': 'active Engineer @Engineering',
      'bob@corp.example.test': 'active Analyst @Engineering',
      'cy@corp.example.test': 'active SRE @Platform',
      'dee@corp.example.test': 'active Account Manager @Sales',
      'eve@corp.example.test': 'suspended Sales Rep @Sales',
      'hal@corp.example.test': 'active Engineer @Engineering',
    });
  });

  it('reads the same directory over StartTLS (ldap://, start_tls: true): nothing to do', async () => {
    const startTls = docsExample(dc).replace(`url: ${dc.ldapsUrl}`, `url: ${dc.url}\n    start_tls: true`);
    const file = config('starttls', startTls.replace('name: ad', 'name: ad'));
    // The docs sync's state: the same records, so the plan from a StartTLS read is empty.
    writeFileSync(file, readFileSync(file, 'utf8').replace('./starttls.db', './docs.db').replace('id: starttls', 'id: docs'));
    const r = await sync(file, '--dry-run');
    expect([r.code, r.stderr, r.doc.result]).toEqual([0, '', 'in_sync']);
    // Another url is another source config: read in full.
    expect(r.doc.source_reads?.map((s) => [s.mode, s.records_read])).toEqual([['full', 7]]);
  });

  it('reads more than 1,000 entries, AD\'s page limit, page by page', async () => {
    const bulk = docsExample(dc).replace(`base_dn: ${STAFF}`, `base_dn: ${BULK}`).replace(/\n {4}members:\n[\s\S]*$/, '\n');
    const file = config('bulk', bulk);
    const r = await sync(file, '--dry-run');
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.doc.source_reads).toEqual([{ source: 'ad', mode: 'full', reason: 'first read', records_read: 1100 }]);
    expect(r.doc.would_apply?.members).toMatchObject({ create: 1100 });
  });

  it('a bind account that may not read uSNChanged: sources check names the step, and every sync reads in full', async () => {
    const limited = docsExample(dc).replace('bind_dn: orgsync@corp.example.test', 'bind_dn: orgsync-limited@corp.example.test');
    // A tenant of its own: the docs sync owns these people on the shared one.
    const own = await startTestEmulator(orgTestSeed());
    const file = config('limited', limited);
    writeFileSync(file, readFileSync(file, 'utf8').replace(emulator.url, own.url));
    const check = await orgsync(['sources', 'check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`check ad: bind ok (as orgsync-limited@corp.example.test)\n`);
    expect(check.stdout).toContain('check ad: read of the watermark attribute failed\n');
    expect(check.stderr).toBe(
      'orgsync: source "ad": sources check failed at "read of the watermark attribute": members: no member entry matched uSNChanged>=0: the account "orgsync-limited@corp.example.test" (bind_dn) may not read uSNChanged, so delta reads cannot find changes: grant it read access to uSNChanged on the member entries, or set delta: false\n',
    );
    try {
      const first = await sync(file);
      expect([first.code, first.stderr, first.doc.source_reads?.map((s) => [s.mode, s.records_read])]).toEqual([0, '', [['full', 7]]]);
      const second = await sync(file);
      expect([second.code, second.stderr]).toEqual([0, '']);
      expect(second.doc.source_reads?.map((s) => [s.mode, s.reason])).toEqual([
        ['full', 'fell back to a full read: no member entry matched uSNChanged>=0: the bind DN may not search uSNChanged (grant it search access to uSNChanged, or set delta: false)'],
      ]);
    } finally {
      await own.close();
    }
    const ok = await orgsync(['sources', 'check', '--config', config('unlimited', docsExample(dc))]);
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    expect(ok.stdout).toMatch(/check ad: read of the watermark attribute ok \(uSNChanged \(highestCommittedUSN \d+\)\)\n/);
    expect(ok.stdout).toContain(`check ad: TLS ok (ldaps://, the certificate verified with ca_file ${dc.caFile}, name dc1.corp.example.test (tls_server_name))\n`);
  });
  it('reads by uSNChanged after a modify, a move, a rename, a delete and group changes; each time a full read agrees', async () => {
    const file = docsConfig();
    const ada = dnOf(byName('Ada Lovelace'));
    // A modify.
    dc.modify(`dn: ${ada}\nchangetype: modify\nreplace: title\ntitle: Principal Engineer\n`);
    let r = await sync(file);
    expect([r.code, r.stderr, r.doc.source_reads?.map((s) => [s.mode, s.records_read])]).toEqual([0, '', [['delta', 1]]]);
    expect((await platform())['ada@corp.example.test']).toBe('active Principal Engineer @Engineering');
    await fullReadAgrees(file);

    // A move to another OU, with its department changed as HR would; and a rename of another entry.
    dc.modify(`dn: ${ada}\nchangetype: modrdn\nnewrdn: CN=Ada Lovelace\ndeleteoldrdn: 1\nnewsuperior: ${SALES}\n\ndn: CN=Ada Lovelace,${SALES}\nchangetype: modify\nreplace: department\ndepartment: Sales\n`);
    dc.modify(`dn: ${dnOf(byName('Bob Babbage'))}\nchangetype: modrdn\nnewrdn: CN=Robert Babbage\ndeleteoldrdn: 1\n\ndn: CN=Robert Babbage,${ENG}\nchangetype: modify\nreplace: displayName\ndisplayName: Robert Babbage\n`);
    r = await sync(file);
    expect([r.code, r.stderr, r.doc.source_reads?.map((s) => [s.mode, s.records_read])]).toEqual([0, '', [['delta', 2]]]);
    const afterMove = await platform();
    expect(afterMove['ada@corp.example.test']).toBe('active Principal Engineer @Sales');
    await fullReadAgrees(file);

    // A delete.
    dc.modify(`dn: ${dnOf(byName('Dee Noether'))}\nchangetype: delete\n`);
    r = await sync(file, '--allow-deletes', '1');
    // Entries changed at the watermark's own USN are read again (uSNChanged>=): a few, never the directory.
    expect([r.code, r.stderr, r.doc.source_reads?.map((s) => s.mode)]).toEqual([0, '', ['delta']]);
    expect(r.doc.source_reads![0]!.records_read).toBeLessThanOrEqual(2);
    expect(await platform()).not.toHaveProperty(['dee@corp.example.test']);
    await fullReadAgrees(file);

    // Out of the group's scope: only the group changes (memberOf is a back link: Hal's uSNChanged stays).
    dc.modify(`dn: CN=Engineering Staff,${GROUPS}\nchangetype: modify\ndelete: member\nmember: ${dnOf(byName('Hal Nested'))}\n`);
    r = await sync(file, '--allow-deletes', '1');
    expect([r.code, r.stderr, r.doc.source_reads?.map((s) => s.mode)]).toEqual([0, '', ['delta']]);
    expect(await platform()).not.toHaveProperty(['hal@corp.example.test']);
    await fullReadAgrees(file);

    // Into the group's scope without a change of its own: the delta cannot map Gus, so the read falls back to full.
    dc.modify(`dn: CN=Staff,${GROUPS}\nchangetype: modify\nadd: member\nmember: ${dnOf(byName('Gus Outside'))}\n`);
    r = await sync(file);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.doc.source_reads?.map((s) => [s.mode, s.reason])).toEqual([['full', 'fell back to a full read: 1 member entries are new without a change of their own (moved into the base with a parent, or keyed by a DN that changed)']]);
    expect((await platform())['gus@corp.example.test']).toBe('active Contractor @Sales');
    await fullReadAgrees(file);
  });

});
