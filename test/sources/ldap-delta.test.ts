/**
 * LDAP delta reads (issue 31) against a real slapd: a full read keeps a snapshot and a watermark, then entries are
 * modified, added, deleted and moved with ldapmodify, and the delta read on that snapshot must give the batch a
 * fresh full read gives, asking the server for the changed entries only; the snapshot it leaves must be the one a
 * full read leaves. The run's snapshot store is stood in for by a Map-backed DeltaReadContext
 * (test/helpers/memory-snapshot.ts).
 */
import { membersOf, plainBatch } from './support.js';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourcesConfigSchema, type LdapSourceConfig } from '../../src/config/sources.js';
import type { ReadMode } from '../../src/sources/delta/types.js';
import { readLdapSource } from '../../src/sources/ldap/read-ldap.js';
import type { Clock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { MemorySnapshot } from '../helpers/memory-snapshot.js';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';

const run = requireSlapd();

/** Every fixture entry was last modified in 2020; the clock says 2021: changes made by the tests are after it. */
const OLD = 'modifyTimestamp: 20200101000000Z\ncreateTimestamp: 20200101000000Z';
const clock: Clock = { now: () => Date.UTC(2021, 0, 1), sleep: async () => {} };
/** The watermark a full read takes at that clock on a server without contextCSN: 10 minutes before it. */
const CLOCK_WATERMARK = JSON.stringify({ by: 'modifyTimestamp', at: '20201231235000Z' });

function person(uid: string, ou: string, extra = ''): string {
  return `dn: uid=${uid},${ou}\nobjectClass: inetOrgPerson\nobjectClass: orgsyncTestLockable\nuid: ${uid}\ncn: ${uid} Person\nsn: Person\nmail: ${uid}@example.org\n${extra}${OLD}`;
}

const ENG = 'ou=Engineering,ou=People,dc=example,dc=org';
const PLATFORM = `ou=Platform,${ENG}`;
const SALES = 'ou=Sales,ou=People,dc=example,dc=org';
const ARCHIVE = 'ou=Archive,dc=example,dc=org';
const ou = (dn: string) => `dn: ${dn}\nobjectClass: organizationalUnit\nou: ${/^ou=([^,]+)/.exec(dn)![1]}\n${OLD}`;

const LDIF = [
  `dn: dc=example,dc=org\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n${OLD}`,
  ou('ou=People,dc=example,dc=org'),
  ou(ENG),
  ou(PLATFORM),
  ou(SALES),
  ou(ARCHIVE),
  person('ada', PLATFORM, 'title: Engineer\nmail: ada.king@example.org\n'),
  person('bob', ENG),
  person('carol', ENG),
  person('dan', ENG),
  person('erin', PLATFORM, 'telephoneNumber: +44 20 7946 0958\n'),
  // audio holds "Caf" + 0xE9 (Latin-1, not UTF-8), mapped as the title: kept as bytes in the snapshot.
  person('fay', SALES, 'audio:: Q2Fm6Q==\n'),
  `dn: uid=gus,${SALES}\nobjectClass: inetOrgPerson\nuid: gus\ncn: Gus NoContact\nsn: NoContact\n${OLD}`,
  person('hal', SALES),
  person('ivy', SALES),
  person('old', ARCHIVE),
].join('\n\n');

/** A logger that keeps the connector's info lines (the delta read's counts). */
function recordingLogger(): { logger: Logger; lines: { obj: Record<string, unknown>; msg: string | undefined }[] } {
  const lines: { obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const noop = () => {};
  const logger: Logger = { trace: noop, debug: noop, info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }), warn: noop, error: noop, child: () => logger };
  return { logger, lines };
}

describe.skipIf(!run)('LDAP delta reads against a real slapd (openldap profile, modifyTimestamp)', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: LDIF }] });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  const source = (over: Record<string, unknown> = {}): LdapSourceConfig =>
    sourcesConfigSchema.parse([
      { name: 'dir', type: 'ldap', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'dc=example,dc=org', phone_region: 'US', members: { base_dn: 'ou=People,dc=example,dc=org', fields: { title: ['title', 'audio'] } }, ...over },
    ])[0] as LdapSourceConfig;

  function ldapmodify(ldif: string): void {
    const r = spawnSync('ldapmodify', ['-x', '-H', slapd.url, '-D', slapd.rootDn, '-w', slapd.rootPassword], { input: ldif, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ldapmodify failed: ${r.stderr}`);
  }

  /** A read as every run without a snapshot does it. */
  const fullRead = (src = source()) => readLdapSource(src, { env: {}, logger: recordingLogger().logger, clock, resolvePath: (p) => p });

  /** A read with the snapshot's DeltaReadContext, committed afterwards; the connector's info lines returned with it. */
  async function snapshotRead(store: MemorySnapshot, mode: ReadMode, src = source(), watermark = store.watermark) {
    const { logger, lines } = recordingLogger();
    const c = store.context(mode, mode === 'full' ? 'first read' : 'steady state', watermark);
    const batch = await readLdapSource(src, { env: {}, logger, clock, resolvePath: (p) => p, delta: c.ctx });
    c.commit();
    return { batch, lines, fallbacks: c.fallbacks, marks: c.marks };
  }

  it('a full read keeps every member entry keyed by entryUUID, with the watermark taken from the clock', async () => {
    const store = new MemorySnapshot();
    const { batch, lines, marks } = await snapshotRead(store, 'full');
    expect(plainBatch(batch)).toEqual(plainBatch(await fullRead()));
    expect(marks).toEqual([CLOCK_WATERMARK]);
    const members = store.records.get('members')!;
    expect(members.size).toBe(9);
    for (const key of members.keys()) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const fay = [...members.values()].find((r) => (r as { dn: string }).dn.startsWith('uid=fay'));
    expect((fay as { attrs: unknown[] }).attrs).toContainEqual(['audio', ['Q2Fm6Q=='], 1]);
    expect(store.records.has('departments')).toBe(false); // departments and positions are read in full each run
    expect(lines).toEqual([{ obj: { source: 'dir', mode: 'full', reason: 'first read', listed: 9 }, msg: 'LDAP members read in full' }]);
  });

  it('after modifies, adds, deletes and moves, a delta read gives what a full read gives, asking only for the changed entries', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full');
    ldapmodify(`dn: uid=ada,${PLATFORM}\nchangetype: modify\nreplace: title\ntitle: Principal Engineer\n`);
    ldapmodify(`dn: uid=hal,${SALES}\nchangetype: modify\nadd: pwdAccountLockedTime\npwdAccountLockedTime: 20260101000000Z\n`);
    ldapmodify(`dn: uid=new,${SALES}\nchangetype: add\nobjectClass: inetOrgPerson\nuid: new\ncn: New Person\nsn: Person\nmail: new@example.org\n`);
    ldapmodify(`dn: uid=bob,${ENG}\nchangetype: delete\n`);
    ldapmodify(`dn: uid=carol,${ENG}\nchangetype: modrdn\nnewrdn: uid=carol\ndeleteoldrdn: 1\nnewsuperior: ${ARCHIVE}\n`); // out of the base
    ldapmodify(`dn: uid=dan,${ENG}\nchangetype: modrdn\nnewrdn: uid=dan\ndeleteoldrdn: 1\nnewsuperior: ${SALES}\n`); // to another department
    // A parent renamed: ada and erin get new DNs without a change of their own (their modifyTimestamp stays).
    ldapmodify(`dn: ${PLATFORM}\nchangetype: modrdn\nnewrdn: ou=Platforms\ndeleteoldrdn: 1\n`);

    const { batch, lines, fallbacks } = await snapshotRead(store, 'delta');
    expect(fallbacks).toEqual([]);
    const full = await fullRead();
    expect(plainBatch(batch)).toEqual(plainBatch(full));
    expect(membersOf(full).map((m) => [m.source_id, m.title, m.status])).toEqual(
      expect.arrayContaining([
        ['ada', 'Principal Engineer', 'active'],
        ['hal', undefined, 'suspended'],
        ['new', undefined, 'active'],
      ]),
    );
    expect(membersOf(full).map((m) => m.source_id)).not.toContain('bob');
    expect(membersOf(full).map((m) => m.source_id)).not.toContain('carol');
    // ada (modified), hal (locked), new (added), dan (moved): the entries sent in full; erin's DN came with the listing.
    expect(lines).toEqual([{ obj: { source: 'dir', mode: 'delta', listed: 8, changed: 4, removed: 2, moved: 1 }, msg: 'LDAP members read by delta' }]);

    // The snapshot the delta left is the one a full read leaves.
    const fresh = new MemorySnapshot();
    await snapshotRead(fresh, 'full');
    expect(store.records).toEqual(fresh.records);
    expect(store.watermark).toBe(CLOCK_WATERMARK);

    // Back as it was for the other tests.
    ldapmodify(`dn: ou=Platforms,${ENG}\nchangetype: modrdn\nnewrdn: ou=Platform\ndeleteoldrdn: 1\n`);
  });

  it('reads nothing but the listing when nothing changed', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full');
    const before = [...store.records.get('members')!];
    // Every entry changed so far is after the watermark: a watermark of now leaves none.
    const now = JSON.stringify({ by: 'modifyTimestamp', at: '20991231000000Z' });
    const { batch, lines } = await snapshotRead(store, 'delta', source(), now);
    expect(plainBatch(batch)).toEqual(plainBatch(await fullRead()));
    expect(lines[0]!.obj).toMatchObject({ mode: 'delta', changed: 0, removed: 0, moved: 0 });
    expect([...store.records.get('members')!]).toEqual(before);
  });

  it('falls back to a full read, with the reason, when the saved watermark is not usable', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full');
    const { batch, fallbacks, marks, lines } = await snapshotRead(store, 'delta', source(), 'usn:42');
    expect(fallbacks).toEqual(['the saved watermark "usn:42" is not one of this LDAP source']);
    expect(marks).toEqual([CLOCK_WATERMARK]); // given once the full read has ended
    expect(plainBatch(batch)).toEqual(plainBatch(await fullRead()));
    expect(lines.map((l) => l.obj.mode)).toEqual(['full']);
    const fresh = new MemorySnapshot();
    await snapshotRead(fresh, 'full');
    expect(store.records).toEqual(fresh.records);

    const usn = JSON.stringify({ by: 'uSNChanged', usn: '12', dc: 'x' });
    expect((await snapshotRead(store, 'delta', source(), usn)).fallbacks).toEqual(['the saved watermark is a uSNChanged, but the server now offers no highestCommittedUSN']);
  });

  it('falls back to a full read when an entry enters the base with its parent (no change of its own)', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full');
    ldapmodify(`dn: ${ARCHIVE}\nchangetype: modrdn\nnewrdn: ou=Archive\ndeleteoldrdn: 1\nnewsuperior: ou=People,dc=example,dc=org\n`);
    try {
      const { batch, fallbacks } = await snapshotRead(store, 'delta');
      // uid=old never changed; carol (moved there by an earlier test, if it ran) was changed by her move.
      expect(fallbacks).toEqual([expect.stringMatching(/^1 member entries are new without a change of their own/)]);
      expect(plainBatch(batch)).toEqual(plainBatch(await fullRead()));
      expect(membersOf(batch).map((m) => m.source_id)).toContain('old');
    } finally {
      ldapmodify(`dn: ou=Archive,ou=People,dc=example,dc=org\nchangetype: modrdn\nnewrdn: ou=Archive\ndeleteoldrdn: 1\nnewsuperior: dc=example,dc=org\n`);
    }
  });

  it('delta: false reads every member each run, and says so', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full', source({ delta: false }));
    const { fallbacks, lines } = await snapshotRead(store, 'delta', source({ delta: false }));
    expect(fallbacks).toEqual(['delta: false in the source config']);
    expect(lines.map((l) => [l.obj.mode, l.obj.reason])).toEqual([['full', 'delta: false in the source config']]);
  });
});

/** A GUID's 16 bytes in base64 (LDIF) from its last byte; objectGUID strings read first three groups little-endian. */
const guid = (n: number) => Buffer.from(`0102030405060708090a0b0c0d0e0f${n.toString(16).padStart(2, '0')}`, 'hex').toString('base64');
const guidText = (n: number) => `04030201-0605-0807-090a-0b0c0d0e0f${n.toString(16).padStart(2, '0')}`;
const NTDS = 'CN=NTDS Settings,DC=corp,DC=example';
const STAFF = 'OU=Staff,DC=corp,DC=example';
const adUser = (cn: string, n: number, usn: number, extra = '') =>
  `dn: CN=${cn},${STAFF}\nobjectClass: user\nobjectGUID:: ${guid(n)}\ncn: ${cn}\nsn: ${cn.split(' ')[1]}\nmail: ${cn.split(' ')[0]!.toLowerCase()}@corp.example\ndepartment: Engineering\nuserAccountControl: 512\nuSNChanged: ${usn}\n${extra}`;
const AD_LDIF = [
  'dn: DC=corp,DC=example\nobjectClass: dcObject\nobjectClass: organization\no: corp\ndc: corp',
  `dn: ${STAFF}\nobjectClass: organizationalUnit\nou: Staff`,
  `dn: ${NTDS}\nobjectClass: applicationProcess\nobjectClass: orgsyncTestDsa\ncn: NTDS Settings\ninvocationId:: ${guid(0xa0)}`,
  adUser('Alice Archer', 1, 400, 'title: Engineer\n'),
  adUser('Bob Baker', 2, 500),
  adUser('Carol Cole', 3, 600),
].join('\n\n');

describe.skipIf(!run)('LDAP delta reads against slapd as a domain controller (active-directory profile, uSNChanged)', () => {
  // slapd keeps no USNs: the rootDSE says 1000 (as a controller would), and the tests set uSNChanged as AD would.
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['DC=corp,DC=example'], ldif: [{ text: AD_LDIF }], rootDse: `dn:\nhighestCommittedUSN: 1000\ndsServiceName: ${NTDS}\n` });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  const source = (): LdapSourceConfig =>
    sourcesConfigSchema.parse([{ name: 'ad', type: 'ldap', profile: 'active-directory', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'DC=corp,DC=example' }])[0] as LdapSourceConfig;
  const ldapmodify = (ldif: string) => {
    const r = spawnSync('ldapmodify', ['-x', '-H', slapd.url, '-D', slapd.rootDn, '-w', slapd.rootPassword], { input: ldif, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ldapmodify failed: ${r.stderr}`);
  };
  const fullRead = () => readLdapSource(source(), { env: {}, logger: recordingLogger().logger, clock, resolvePath: (p) => p });
  async function snapshotRead(store: MemorySnapshot, mode: ReadMode) {
    const { logger, lines } = recordingLogger();
    const c = store.context(mode, mode === 'full' ? 'first read' : 'steady state');
    const batch = await readLdapSource(source(), { env: {}, logger, clock, resolvePath: (p) => p, delta: c.ctx });
    c.commit();
    return { batch, lines, fallbacks: c.fallbacks };
  }

  it('keys members by objectGUID, takes highestCommittedUSN with the invocationId, and reads entries with uSNChanged at or above it', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full');
    expect(JSON.parse(store.watermark!)).toEqual({ by: 'uSNChanged', usn: '1000', dc: guidText(0xa0) });
    expect([...store.records.get('members')!.keys()]).toEqual([guidText(1), guidText(2), guidText(3)]);

    ldapmodify(`dn: CN=Alice Archer,${STAFF}\nchangetype: modify\nreplace: title\ntitle: Staff Engineer\n-\nreplace: uSNChanged\nuSNChanged: 1001\n`);
    ldapmodify(`dn: CN=Bob Baker,${STAFF}\nchangetype: delete\n`);
    ldapmodify(adUser('Dora Dunn', 4, 1002).replace('\n', '\nchangetype: add\n'));
    const { batch, lines, fallbacks } = await snapshotRead(store, 'delta');
    expect(fallbacks).toEqual([]);
    expect(plainBatch(batch)).toEqual(plainBatch(await fullRead()));
    expect(membersOf(batch).map((m) => [m.source_id, m.title])).toEqual([
      [guidText(1), 'Staff Engineer'],
      [guidText(3), undefined],
      [guidText(4), undefined],
    ]);
    expect(lines).toEqual([{ obj: { source: 'ad', mode: 'delta', listed: 3, changed: 2, removed: 1, moved: 0 }, msg: 'LDAP members read by delta' }]);
  });

  it('reads in full when the controller was restored (its invocationId changed)', async () => {
    const store = new MemorySnapshot();
    await snapshotRead(store, 'full');
    ldapmodify(`dn: ${NTDS}\nchangetype: modify\nreplace: invocationId\ninvocationId:: ${guid(0xb0)}\n`);
    const { batch, fallbacks } = await snapshotRead(store, 'delta');
    expect(fallbacks).toEqual([`the domain controller is not the one of the saved uSNChanged watermark (invocationId ${guidText(0xa0)}, now ${guidText(0xb0)}: another controller, or one restored from a backup)`]);
    expect(plainBatch(batch)).toEqual(plainBatch(await fullRead()));
    expect(JSON.parse(store.watermark!)).toEqual({ by: 'uSNChanged', usn: '1000', dc: guidText(0xb0) });
  });
});

describe.skipIf(!run)('LDAP delta reads against slapd with the syncprov overlay (contextCSN)', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    const ldif = [`dn: dc=example,dc=org\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n${OLD}`, ou('ou=People,dc=example,dc=org'), ou(ENG), person('ada', ENG), person('bob', ENG), person('cy', ENG)];
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: ldif.join('\n\n') }], syncprov: true });
  });
  afterAll(async () => {
    await slapd?.stop();
  });
  const ldap = (tool: string, args: string[], input?: string) => {
    const r = spawnSync(tool, ['-x', '-H', slapd.url, '-D', slapd.rootDn, '-w', slapd.rootPassword, ...args], { input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
    return r.stdout;
  };
  const source = (): LdapSourceConfig =>
    sourcesConfigSchema.parse([{ name: 'dir', type: 'ldap', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'dc=example,dc=org', phone_region: 'US' }])[0] as LdapSourceConfig;

  it('takes the watermark from the newest contextCSN, not from its own clock', async () => {
    ldap('ldapmodify', [], `dn: uid=ada,${ENG}\nchangetype: modify\nreplace: title\ntitle: Engineer\n`);
    const csn = /contextCSN: (\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/.exec(ldap('ldapsearch', ['-LLL', '-b', 'dc=example,dc=org', '-s', 'base', 'contextCSN']))!;
    const newest = Date.UTC(Number(csn[1]), Number(csn[2]) - 1, Number(csn[3]), Number(csn[4]), Number(csn[5]), Number(csn[6]));
    const expected = `${new Date(newest - 10 * 60_000).toISOString().slice(0, 19).replace(/[-T:]/g, '')}Z`;

    const store = new MemorySnapshot();
    const full = store.context('full', 'first read');
    await readLdapSource(source(), { env: {}, logger: recordingLogger().logger, clock, resolvePath: (p) => p, delta: full.ctx });
    full.commit();
    expect(JSON.parse(store.watermark!)).toEqual({ by: 'modifyTimestamp', at: expected });

    ldap('ldapmodify', [], `dn: uid=bob,${ENG}\nchangetype: modify\nreplace: title\ntitle: Manager\n`);
    const { logger, lines } = recordingLogger();
    const next = store.context('delta', 'steady state');
    const batch = await readLdapSource(source(), { env: {}, logger, clock, resolvePath: (p) => p, delta: next.ctx });
    expect(plainBatch(batch)).toEqual(plainBatch(await readLdapSource(source(), { env: {}, logger: recordingLogger().logger, clock, resolvePath: (p) => p })));
    // ada (changed within the overlap before the watermark) and bob; cy, last changed in 2020, is not sent.
    expect(lines.map((l) => l.obj)).toEqual([{ source: 'dir', mode: 'delta', listed: 3, changed: 2, removed: 0, moved: 0 }]);
    expect(membersOf(batch).find((m) => m.source_id === 'bob')!.title).toBe('Manager');
  });
});

describe.skipIf(!run)('LDAP delta reads with a bind that may not search modifyTimestamp (an ACL)', () => {
  const READER = 'uid=reader,dc=example,dc=org';
  let slapd: Slapd;
  beforeAll(async () => {
    const ldif = [
      `dn: dc=example,dc=org\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n${OLD}`,
      `dn: ${READER}\nobjectClass: account\nobjectClass: simpleSecurityObject\nuid: reader\nuserPassword: reader-pw`,
      ou('ou=People,dc=example,dc=org'),
      ou(ENG),
      person('ada', ENG),
      person('bob', ENG),
    ];
    const access = ['to attrs=userPassword by anonymous auth by * none', `to attrs=modifyTimestamp by dn.exact="${READER}" none by * read`, 'to * by * read'];
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: ldif.join('\n\n') }], access });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it('a full read saves why delta reads cannot work, and the next delta read falls back with that reason', async () => {
    const source = sourcesConfigSchema.parse([{ name: 'dir', type: 'ldap', url: slapd.url, bind_dn: READER, bind_password: 'reader-pw', base_dn: 'dc=example,dc=org', phone_region: 'US' }])[0] as LdapSourceConfig;
    const store = new MemorySnapshot();
    const first = store.context('full', 'first read');
    const warnings: unknown[] = [];
    const { logger } = recordingLogger();
    const batch = await readLdapSource(source, { env: {}, logger: { ...logger, warn: (obj, msg) => warnings.push([obj, msg]) }, clock, resolvePath: (p) => p, delta: first.ctx });
    first.commit();
    expect(membersOf(batch).map((m) => m.source_id)).toEqual(['ada', 'bob']);
    expect(store.records.get('members')!.size).toBe(2);
    const reason = 'no member entry matched modifyTimestamp>=19700101000000Z: the bind DN may not search modifyTimestamp (grant it search access to modifyTimestamp, or set delta: false)';
    expect(JSON.parse(store.watermark!)).toEqual({ by: 'none', reason });
    expect(warnings).toEqual([[{ source: 'dir', attribute: 'modifyTimestamp' }, 'LDAP delta reads unusable: the bind cannot search the watermark attribute']]);

    const next = store.context('delta', 'steady state');
    expect(plainBatch(await readLdapSource(source, { env: {}, logger, clock, resolvePath: (p) => p, delta: next.ctx }))).toEqual(plainBatch(batch));
    expect(next.fallbacks).toEqual([reason]);
  });
});
