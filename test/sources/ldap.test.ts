import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { readDesiredState } from '../../src/sources/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import type { DesiredState } from '../../src/domain/desired.js';
import type { OrgsyncError } from '../../src/shared/errors.js';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';
import { FIXTURES, instantClock, read, sourcesConfig } from './support.js';
import { PhoneCache } from '../../src/domain/phone-cache.js';
import { tempDir } from '../helpers/temp.js';

const LDAP_FIXTURES = join(FIXTURES, '../ldap');
const run = requireSlapd();

function deptNames(state: DesiredState): Record<string, string> {
  return Object.fromEntries(state.departments.map((d) => [d.source_id, d.name]));
}

describe.skipIf(!run)('LDAP connector: openldap profile against a real slapd', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ file: join(LDAP_FIXTURES, 'openldap-corp.ldif') }], tls: true });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  const source = (over: Record<string, unknown> = {}) => ({
    name: 'corp',
    type: 'ldap',
    url: slapd.url,
    bind_dn: slapd.rootDn,
    bind_password: slapd.rootPassword,
    base_dn: 'dc=example,dc=org',
    phone_region: 'US',
    ...over,
  });

  async function expectCorp(state: DesiredState) {
    const names = deptNames(state);
    // Departments from the OU tree: ids are entryUUIDs, parents come from the DN.
    expect(Object.values(names).sort()).toEqual(['Engineering', 'Platform', 'Sales']);
    for (const id of Object.keys(names)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const platform = state.departments.find((d) => d.name === 'Platform')!;
    expect(names[platform.parent_source_id!]).toBe('Engineering');
    expect(state.departments.find((d) => d.name === 'Sales')!.parent_source_id).toBeUndefined();
    expect(platform.origin).toEqual({ source: 'corp', location: 'ou=Platform,ou=Engineering,dc=example,dc=org' });

    const m = Object.fromEntries([...state.members].map((x) => [x.source_id, x]));
    expect(Object.keys(m).sort()).toEqual(['ada', 'alan', 'grace', 'linus']);
    expect(m.ada).toMatchObject({ display_name: 'Ada King', email: 'ada@example.org', phone: '+442079460958', title: 'Engineer', status: 'active' });
    expect(names[m.ada!.department_source_id!]).toBe('Platform');
    expect(m.alan).toMatchObject({ status: 'suspended' }); // pwdAccountLockedTime
    expect(names[m.alan!.department_source_id!]).toBe('Engineering');
    expect(m.grace).toMatchObject({ status: 'suspended', phone: '+14155550199' }); // nsAccountLock: TRUE
    expect(m.linus!.department_source_id).toBeUndefined();
    expect(m.ada!.origin).toEqual({ source: 'corp', location: 'uid=ada,ou=Platform,ou=Engineering,dc=example,dc=org' });

    expect(state.quarantine.map((q) => [q.reason, q.location, q.message, q.source_id])).toEqual([
      ['missing_id', 'cn=No Uid,ou=Sales,dc=example,dc=org', 'no source id (the id field uid is empty or missing)', undefined],
      ['invalid_email', 'uid=badmail,ou=Sales,dc=example,dc=org', 'invalid e-mail "not-an-address"', 'badmail'],
      ['no_contact', 'uid=nocontact,ou=Sales,dc=example,dc=org', 'member has neither e-mail nor phone (the platform needs one)', 'nocontact'],
    ]);
    expect(state.provided).toEqual({ departments: true, positions: false, members: true });
  }

  it('reads departments from the OU tree and members with their department from the DN', async () => {
    await expectCorp(await read([source()]));
  });

  it('pages through small pages with the same result', async () => {
    await expectCorp(await read([source({ page_size: 2 })]));
  });

  it('reads attributes whatever the case of their names in the config (the server spells them its own way)', async () => {
    const fields = { id: 'uid', display_name: ['DISPLAYNAME', 'Cn'], email: 'MAIL', phone: ['telephonenumber', 'MOBILE'], title: 'Title' };
    await expectCorp(await read([source({ page_size: 2, members: { fields } })]));
    const byDn = await read([source({ departments: false, members: { filter: '(uid=ada)', fields: { id: 'DN' } } })]);
    expect([...byDn.members].map((m) => m.source_id)).toEqual(['uid=ada,ou=Platform,ou=Engineering,dc=example,dc=org']);
  });

  it('takes the verdict of an earlier run from the phone cache (a shape the fast path leaves to libphonenumber-js)', async () => {
    const phoneCache = new PhoneCache([{ region: 'US', raw: '+44 20 7946 0958 ext. 7', e164: '+442079460000' }]);
    const config = sourcesConfig([source({ departments: false, members: { filter: '(uid=ada)', fields: { phone: '{telephoneNumber} ext. 7' } } })]);
    const state = await readDesiredState(config, { env: {}, logger: silentLogger, clock: instantClock, phoneCache });
    expect([...state.members].map((m) => [m.source_id, m.phone])).toEqual([['ada', '+442079460000']]);
  });

  it('stops when the run is aborted, the next page already asked for, and leaves no request failing afterwards', async () => {
    const ac = new AbortController();
    ac.abort();
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const config = sourcesConfig([source({ page_size: 1 })]);
      await expect(readDesiredState(config, { env: {}, logger: silentLogger, clock: instantClock, signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      // The abandoned page's answer fails when the connection closes: give that failure a chance to surface.
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('ldaps:// with the CA file', async () => {
    await expectCorp(await read([source({ url: slapd.ldapsUrl, ca_file: slapd.caFile })]));
  });

  it('StartTLS with the CA file', async () => {
    await expectCorp(await read([source({ start_tls: true, ca_file: slapd.caFile })]));
  });

  it('refuses a server certificate from another CA (ldaps), naming ca_file and its path', async () => {
    const err = (await read([source({ url: slapd.ldapsUrl, ca_file: slapd.otherCaFile })]).catch((e: unknown) => e)) as OrgsyncError;
    const hint = `TLS with ${slapd.ldapsUrl} failed: the server's certificate is not signed by the CA in ca_file ${slapd.otherCaFile}: set ca_file to the PEM of the CA that signed it (on Active Directory, the enterprise root CA's certificate); the connection failed with: `;
    expect(err.message.slice(0, 15 + hint.length)).toBe(`source "corp": ${hint}`);
    expect(err.message).toMatch(/with: (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/);
    expect(err.details).toEqual({ step: 'TLS' });
  });

  it('refuses a server certificate from another CA (StartTLS), naming ca_file and its path', async () => {
    const err = (await read([source({ start_tls: true, ca_file: slapd.otherCaFile })]).catch((e: unknown) => e)) as OrgsyncError;
    const hint = `TLS with ${slapd.url} failed: the server's certificate is not signed by the CA in ca_file ${slapd.otherCaFile}: set ca_file to the PEM of the CA that signed it (on Active Directory, the enterprise root CA's certificate); the connection failed with: `;
    expect(err.message.slice(0, 15 + hint.length)).toBe(`source "corp": ${hint}`);
    expect(err.details).toEqual({ step: 'TLS' });
  });

  it('fails on a wrong bind password, naming bind_dn and bind_password', async () => {
    await expect(read([source({ bind_password: 'wrong' })])).rejects.toThrow(
      'source "corp": bind as cn=admin,dc=example,dc=org failed: the server refused the name or password: check bind_dn "cn=admin,dc=example,dc=org" and bind_password; the server said: invalid credentials (LDAP result 49)',
    );
  });

  it('fails on a base DN that does not exist, naming base_dn', async () => {
    await expect(read([source({ base_dn: 'dc=nope,dc=org' })])).rejects.toThrow(
      'source "corp": departments: search under "dc=nope,dc=org" with (objectClass=organizationalUnit) failed: the base DN "dc=nope,dc=org" does not exist (or the account "cn=admin,dc=example,dc=org" may not see it): check base_dn; the server said: no such object (LDAP result 32)',
    );
  });

  it('fails when the server is not there, naming url', async () => {
    const err = (await read([source({ url: 'ldap://127.0.0.1:9' })]).catch((e: unknown) => e)) as OrgsyncError;
    expect(err.message).toBe('source "corp": cannot connect to ldap://127.0.0.1:9: nothing listens on 127.0.0.1:9: check url (host and port: 636 for ldaps://, 389 for ldap://); the connection failed with: ECONNREFUSED');
    expect(err.details).toEqual({ step: 'connect' });
  });

  it('takes the bind password from a file or the environment (config loader)', async () => {
    const dir = tempDir('orgsync-ldap-');
    writeFileSync(join(dir, 'bind-pw'), `${slapd.rootPassword}\n`);
    const yaml = (pw: string) =>
      `platform:\n  base_url: http://127.0.0.1:1\nsources:\n  - name: corp\n    type: ldap\n    url: ${slapd.ldapsUrl}\n    ca_file: ${slapd.caFile}\n    bind_dn: ${slapd.rootDn}\n    ${pw}\n    base_dn: dc=example,dc=org\n    phone_region: US\n`;
    const fromFile = parseConfig(yaml('bind_password_file: bind-pw'), join(dir, 'c.yaml'), {});
    await expectCorp(await readDesiredState(fromFile, { env: {}, logger: silentLogger, clock: instantClock }));
    const fromEnv = parseConfig(yaml('bind_password: ${LDAP_PW}'), join(dir, 'c.yaml'), { LDAP_PW: slapd.rootPassword });
    expect(fromEnv.meta.secrets).toContain(slapd.rootPassword);
    await expectCorp(await readDesiredState(fromEnv, { env: {}, logger: silentLogger, clock: instantClock }));
  });

  it('a refused password names where it was read: the environment variable or the file', async () => {
    const dir = tempDir('orgsync-ldap-');
    writeFileSync(join(dir, 'bind-pw'), 'wrong-password\n');
    const yaml = (pw: string) =>
      `platform:\n  base_url: http://127.0.0.1:1\nsources:\n  - name: corp\n    type: ldap\n    url: ${slapd.url}\n    bind_dn: ${slapd.rootDn}\n    ${pw}\n    base_dn: dc=example,dc=org\n`;
    const refused = (from: string) =>
      `source "corp": bind as cn=admin,dc=example,dc=org failed: the server refused the name or password: check bind_dn "cn=admin,dc=example,dc=org" and bind_password (read from ${from}); the server said: invalid credentials (LDAP result 49)`;
    const fromFile = parseConfig(yaml('bind_password_file: bind-pw'), join(dir, 'c.yaml'), {});
    await expect(readDesiredState(fromFile, { env: {}, logger: silentLogger, clock: instantClock })).rejects.toThrow(refused(`file ${join(dir, 'bind-pw')} (bind_password_file)`));
    const fromEnv = parseConfig(yaml('bind_password: ${LDAP_PW}'), join(dir, 'c.yaml'), { LDAP_PW: 'also-wrong' });
    await expect(readDesiredState(fromEnv, { env: {}, logger: silentLogger, clock: instantClock })).rejects.toThrow(refused('$LDAP_PW'));
  });

  it('takes departments from an attribute when told to', async () => {
    const state = await read([source({ departments: false, members: { filter: '(uid=ada)', department_from: 'attribute' } })]);
    expect(state.departments.map((d) => d.source_id)).toEqual(['ENG-PLAT']);
    expect([...state.members][0]!.department_source_id).toBe('ENG-PLAT');
  });

  it('reads positions from entries with their own filter', async () => {
    const state = await read([source({ positions: { filter: '(objectClass=organizationalRole)', scope: 'one', fields: { id: 'cn', name: 'cn', description: 'description' } } })]);
    expect(state.positions.map((p) => [p.source_id, p.name, p.description, p.origin!.location])).toEqual([
      ['Engineer', 'Engineer', 'Builds things', 'cn=Engineer,dc=example,dc=org'],
      ['Accountant', 'Accountant', undefined, 'cn=Accountant,dc=example,dc=org'],
    ]);
    expect(state.provided.positions).toBe(true);
  });

  it('maps fields with a template and custom filters', async () => {
    const state = await read([source({ departments: false, members: { filter: '(&(objectClass=inetOrgPerson)(mail=*))', fields: { id: 'dn', display_name: '{sn}, {cn}' } } })]);
    expect([...state.members].map((m) => [m.source_id, m.display_name])).toEqual([
      ['uid=ada,ou=Platform,ou=Engineering,dc=example,dc=org', 'Lovelace, Ada Lovelace'],
      ['uid=alan,ou=Engineering,dc=example,dc=org', 'Turing, Alan Turing'],
      ['uid=linus,dc=example,dc=org', 'Torvalds, Linus Torvalds'],
      ['cn=No Uid,ou=Sales,dc=example,dc=org', 'Uid, No Uid'],
    ]);
    expect(state.quarantine.map((q) => q.reason)).toEqual(['invalid_email']);
  });
});

describe.skipIf(!run)('LDAP connector: active-directory profile against slapd with the AD schema', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=corp,dc=example'], ldif: [{ file: join(LDAP_FIXTURES, 'ad-corp.ldif') }] });
  });
  afterAll(async () => {
    await slapd?.stop();
  });
  const source = (over: Record<string, unknown> = {}) => ({
    name: 'ad',
    type: 'ldap',
    profile: 'active-directory',
    url: slapd.url,
    bind_dn: slapd.rootDn,
    bind_password: slapd.rootPassword,
    base_dn: 'DC=corp,DC=example',
    ...over,
  });

  it('decodes objectGUID, reads userAccountControl and derives departments from the department attribute', async () => {
    const state = await read([source()]);
    expect(state.departments.map((d) => [d.source_id, d.name, d.parent_source_id])).toEqual([
      ['Engineering', 'Engineering', undefined],
      ['Finance', 'Finance', undefined],
    ]);
    const m = Object.fromEntries([...state.members].map((x) => [x.source_id, x]));
    expect(Object.keys(m)).toEqual(['d6b8a5e1-3c2b-4f7a-9e8d-1a2b3c4d5e6f', '0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9', '11111111-2222-4333-8444-555555555555']);
    expect(m['d6b8a5e1-3c2b-4f7a-9e8d-1a2b3c4d5e6f']).toMatchObject({ display_name: 'Alice Archer', email: 'alice.archer@corp.example', phone: '+14155550101', title: 'Engineer', department_source_id: 'Engineering', status: 'active' });
    expect(m['0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9']).toMatchObject({ display_name: 'Bob Baker', phone: '+447911123456', department_source_id: 'Finance', status: 'suspended' });
    expect(m['11111111-2222-4333-8444-555555555555']).toMatchObject({ status: 'active' }); // 66048 = 0x10200: bit 0x2 clear
    expect(state.quarantine.map((q) => [q.reason, q.location, q.source_id])).toEqual([
      ['missing_id', 'cn=Erin NoGuid,ou=Staff,dc=corp,dc=example', undefined],
      ['no_contact', 'cn=Dave NoMail,ou=Staff,dc=corp,dc=example', 'abcdefab-cdef-4abc-8def-abcdefabcdef'],
    ]);
  });

  it('reads the OU tree when departments are configured (objectGUID ids)', async () => {
    const state = await read([source({ departments: {} })]);
    expect(state.departments.map((d) => [d.source_id, d.name])).toEqual([['f0e1d2c3-b4a5-4697-8877-665544332211', 'Staff']]);
    expect(new Set([...state.members].map((m) => m.department_source_id))).toEqual(new Set(['f0e1d2c3-b4a5-4697-8877-665544332211']));
  });
});

describe.skipIf(!run)('LDAP connector: values that are not UTF-8, multi-valued attributes', () => {
  // audio (an octet string, mapped as the title here) holds "Caf" + 0xE9: Latin-1, not UTF-8, as a legacy import may leave it.
  const LDIF = `dn: ou=People,dc=example,dc=org
objectClass: organizationalUnit
ou: People

dn: uid=ann,ou=People,dc=example,dc=org
objectClass: inetOrgPerson
uid: ann
cn: Ann Lee
sn: Lee
mail: ann@example.org
mail: ann.lee@example.org
audio: Engineer

dn: uid=bad,ou=People,dc=example,dc=org
objectClass: inetOrgPerson
uid: bad
cn: Bad Bytes
sn: Bytes
mail: bad@example.org
audio:: Q2Fm6Q==
`;
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: LDIF }] });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it('quarantines a member whose mapped value is not UTF-8 and takes the first of several values', async () => {
    const state = await read([{ name: 'dir', type: 'ldap', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'dc=example,dc=org', members: { fields: { title: 'audio' } } }]);
    expect([...state.members].map((m) => [m.source_id, m.email, m.title])).toEqual([['ann', 'ann@example.org', 'Engineer']]);
    expect(state.quarantine.map((q) => [q.reason, q.source_id, q.message])).toEqual([
      ['invalid_encoding', 'bad', "title contains U+FFFD (bytes not valid in the configured encoding; check the source's encoding)"],
    ]);
  });
});
