/**
 * Issue 21 point 8 for LDAP: a paged search whose answer comes without the paged-results control (RFC 2696) ends
 * ldapts' walk as if it were complete; orgsync fails the read instead. On a real slapd, a `limits ... size.prtotal=disabled`
 * for one bind DN makes the server ignore paging for it (and answer without the control), while the same search as
 * another user pages normally, and slapd's ldif backend, which does not implement paging, answers a non-critical
 * paged search in one answer without the control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';
import { read } from './support.js';

const run = requireSlapd();

const people = Array.from({ length: 7 }, (_, i) => `dn: uid=p${i + 1},ou=People,dc=example,dc=org
objectClass: inetOrgPerson
uid: p${i + 1}
cn: Person ${i + 1}
sn: ${i + 1}
mail: p${i + 1}@example.org
`).join('\n');

const LDIF = `dn: ou=People,dc=example,dc=org
objectClass: organizationalUnit
ou: People

dn: uid=reader,dc=example,dc=org
objectClass: inetOrgPerson
uid: reader
cn: Reader
sn: Reader
userPassword: reader-pass

dn: uid=unpaged,dc=example,dc=org
objectClass: inetOrgPerson
uid: unpaged
cn: Unpaged
sn: Unpaged
userPassword: unpaged-pass

${people}`;

describe.skipIf(!run)('LDAP: a paged search answered without the paged-results control', () => {
  let slapd: Slapd;
  let ldifSlapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: LDIF }], limits: ['dn.exact="uid=unpaged,dc=example,dc=org" size.prtotal=disabled'] });
    ldifSlapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: LDIF }], backend: 'ldif' });
  });
  afterAll(async () => {
    await slapd?.stop();
    await ldifSlapd?.stop();
  });
  const src = (bind: string, password: string, url = slapd.url) => ({
    name: 'dir',
    type: 'ldap',
    url,
    bind_dn: bind,
    bind_password: password,
    base_dn: 'ou=People,dc=example,dc=org',
    departments: false,
    page_size: 3,
  });

  it('pages normally for a user the server pages for (three pages of at most three)', async () => {
    const state = await read([src('uid=reader,dc=example,dc=org', 'reader-pass')]);
    expect([...state.members].map((m) => m.source_id).sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
  });

  it('a server that refuses paging for the user fails the search', async () => {
    const err = await read([src('uid=unpaged,dc=example,dc=org', 'unpaged-pass')]).catch((e: Error & { code?: string }) => e);
    expect((err as Error).message).toBe('source "dir": members: search under "ou=People,dc=example,dc=org" with (objectClass=inetOrgPerson) failed: admin limit exceeded: pagedResults control not allowed (LDAP result 11)');
  });

  it('fails the read when the answer comes without the control (a backend without paging ignores it)', async () => {
    const err = await read([src('uid=reader,dc=example,dc=org', 'reader-pass', ldifSlapd.url)]).catch((e: Error & { code?: string }) => e);
    expect((err as { code?: string }).code).toBe('SOURCE_UNREADABLE');
    expect((err as Error).message).toBe(
      'source "dir": members: search under "ou=People,dc=example,dc=org": the server answered a paged search without the paged-results control (RFC 2696), so the read may be short; nothing is written (check the server\'s paged-results limits for uid=reader,dc=example,dc=org)',
    );
  });
});
