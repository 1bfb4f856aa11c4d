/**
 * What a new operator meets on the way to a real Active Directory (issue 43 points 2 and 3), produced by a private
 * Samba 4 AD DC (test/helpers/samba.ts) and, where Samba cannot say it, by a loopback LDAP double that answers a bind
 * as Active Directory does: each failure through `orgsync sources check`, which names the step that failed
 * (connect, TLS, bind, search of the members filter, read of the watermark attribute), the setting to change (a
 * secret with the environment variable or file it was read from) and keeps the server's own words after it.
 *
 * Samba answers 52e for an unknown account as well as a wrong password (it squashes NO_SUCH_USER into
 * LOGON_FAILURE), and counts a password as expired only when it is older than a day: 525 and 532 come from the
 * double. Every other sub-code below is the real server's.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { AD_BASE, AD_PASSWORD, requireSamba, startSamba, unicodePwd, type SambaDc } from '../helpers/samba.js';
import { tempDir } from '../helpers/temp.js';

const run = requireSamba();
const PEOPLE = `OU=People,${AD_BASE}`;
/** 2020-01-01 as a FILETIME. */
const EXPIRED_2020 = '132223104000000000';

/** A bind account `cn` with the password AD_PASSWORD and the extra attributes given (LDIF lines). */
const account = (cn: string, extra = '', uac = 512) =>
  `dn: CN=${cn},${PEOPLE}\nobjectClass: user\nsAMAccountName: ${cn}\nuserPrincipalName: ${cn}@corp.example.test\nmail: ${cn}@corp.example.test\nunicodePwd:: ${unicodePwd(AD_PASSWORD)}\nuserAccountControl: ${uac}\n${extra}`;

const DIRECTORY = [
  `dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: People`,
  account('orgsync'),
  account('disabled', '', 514),
  account('expired', `accountExpires: ${EXPIRED_2020}\n`),
  account('must-change', 'pwdLastSet: 0\n'),
  // No logon hour at all (21 zero bytes).
  account('night-shift', `logonHours:: ${Buffer.alloc(21).toString('base64')}\n`),
  account('one-pc', 'userWorkstations: SOMEPC\n'),
  account('locked'),
  // One wrong password locks `locked` (a password settings object that applies to it alone).
  `dn: CN=lock-after-one,CN=Password Settings Container,CN=System,${AD_BASE}\nobjectClass: msDS-PasswordSettings\nmsDS-PasswordSettingsPrecedence: 1\nmsDS-PasswordReversibleEncryptionEnabled: FALSE\nmsDS-PasswordHistoryLength: 0\nmsDS-PasswordComplexityEnabled: FALSE\nmsDS-MinimumPasswordLength: 0\nmsDS-MinimumPasswordAge: 0\nmsDS-MaximumPasswordAge: -9223372036854775808\nmsDS-LockoutThreshold: 1\nmsDS-LockoutObservationWindow: -18000000000\nmsDS-LockoutDuration: -18000000000\nmsDS-PSOAppliesTo: CN=locked,${PEOPLE}`,
].join('\n\n');

/** An LDAP server that answers every bind with result 49 and `diagnostic`, as a domain controller does. */
async function adBindDouble(diagnostic: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((socket: Socket) => {
    socket.on('data', (data: Buffer) => {
      // LDAPMessage: SEQUENCE { messageID INTEGER, protocolOp }; a bindRequest is [APPLICATION 0] (0x60).
      const lenBytes = data[1]! & 0x80 ? data[1]! & 0x7f : 0;
      const at = 2 + lenBytes;
      const idLen = data[at + 1]!;
      const id = data.subarray(at + 2, at + 2 + idLen);
      const op = data[at + 2 + idLen];
      if (op !== 0x60) return void socket.end();
      const tlv = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag]), berLength(body.length), body]);
      const response = tlv(0x61, Buffer.concat([Buffer.from([0x0a, 0x01, 49]), tlv(0x04, Buffer.alloc(0)), tlv(0x04, Buffer.from(diagnostic))]));
      socket.write(tlv(0x30, Buffer.concat([tlv(0x02, id), response])));
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `ldap://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function berLength(n: number): Buffer {
  return n < 0x80 ? Buffer.from([n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
}

/** AD's diagnostic message of a failed simple bind with sub-code `data`. */
const adDiagnostic = (data: string) => `80090308: LdapErr: DSID-0C0903A9, comment: AcceptSecurityContext error, data ${data}, v1db1`;

describe.skipIf(!run)('source errors that say where to fix, from a real Active Directory (Samba 4)', () => {
  let dc: SambaDc;
  let dir: string;
  beforeAll(async () => {
    const started = Date.now();
    dc = await startSamba({ ldif: DIRECTORY });
    console.log(`Samba AD DC provisioned and started in ${Date.now() - started} ms`);
    dir = tempDir('orgsync-samba-errors-');
    writeFileSync(join(dir, 'ldap-password'), `${AD_PASSWORD}\n`);
    writeFileSync(join(dir, 'wrong-password'), 'not-the-password\n');
  }, 180_000);
  afterAll(async () => {
    await dc?.stop();
  });

  /** A config with one active-directory source; `lines` are its own keys (YAML, 4 spaces in). */
  function config(lines: string, filter = '(objectClass=user)'): string {
    const file = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, `platform:\n  base_url: http://127.0.0.1:1\nlog:\n  level: silent\nsources:\n  - name: ad\n    type: ldap\n    profile: active-directory\n    base_dn: ${PEOPLE}\n    members:\n      filter: ${filter}\n${lines}`);
    return file;
  }
  const secure = (bind = 'orgsync') => `    url: ${dc.ldapsUrl}\n    ca_file: ${dc.caFile}\n    tls_server_name: dc1.corp.example.test\n    bind_dn: ${bind}@corp.example.test\n`;
  const check = (file: string, env: Record<string, string> = { LDAP_PASSWORD: AD_PASSWORD }) => runCli(['sources', 'check', '--config', file], env);

  /** sources check fails at `step`: exit 1, the step's line, and the one-line error. */
  async function failsAt(file: string, step: string, env?: Record<string, string>): Promise<string> {
    const r = await check(file, env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`check ad: ${step} failed\n`);
    const prefix = `orgsync: source "ad": sources check failed at "${step}": `;
    expect(r.stderr.startsWith(prefix), r.stderr).toBe(true);
    return r.stderr.slice(prefix.length).trimEnd();
  }

  it('passes every step with LDAPS, the DC\'s CA and its name', async () => {
    const r = await check(config(`${secure()}    bind_password: \${LDAP_PASSWORD}\n`));
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('check ad: ')).map((l) => l.replace(/ \(.*$/, ''))).toEqual([
      'check ad: connect ok',
      'check ad: TLS ok',
      'check ad: bind ok',
      'check ad: search of the members filter ok',
      'check ad: read of the watermark attribute ok',
    ]);
  });

  it('a simple bind over ldap:// without TLS: the bind step names ldaps:// and start_tls', async () => {
    const message = await failsAt(config(`    url: ${dc.url}\n    bind_dn: orgsync@corp.example.test\n    bind_password: \${LDAP_PASSWORD}\n`), 'bind');
    expect(message).toBe(
      `bind as orgsync@corp.example.test failed: the server refuses a simple bind on a connection without TLS (Active Directory does by default): set url to ldaps://${dc.host}:636, or start_tls: true, with ca_file naming the CA of the server's certificate; the server said: strong auth required: BindSimple: Transport encryption required. (LDAP result 8)`,
    );
  });

  it('StartTLS on ldap:// binds', async () => {
    const r = await check(config(`    url: ${dc.url}\n    start_tls: true\n    ca_file: ${dc.caFile}\n    tls_server_name: dc1.corp.example.test\n    bind_dn: orgsync@corp.example.test\n    bind_password: \${LDAP_PASSWORD}\n`));
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`check ad: TLS ok (StartTLS, the certificate verified with ca_file ${dc.caFile}, name dc1.corp.example.test (tls_server_name))\n`);
  });

  it('LDAPS to the address, which the certificate does not name: the TLS step names tls_server_name and the names it carries', async () => {
    const message = await failsAt(config(`    url: ${dc.ldapsUrl}\n    ca_file: ${dc.caFile}\n    bind_dn: orgsync@corp.example.test\n    bind_password: \${LDAP_PASSWORD}\n`), 'TLS');
    expect(message).toBe(
      `TLS with ${dc.ldapsUrl} failed: the server's certificate does not name ${dc.host}; it names DC1.corp.example.test (its subject CN; it has no subjectAltName): set tls_server_name to one of those names, or use one of them in url; the connection failed with: ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: IP: ${dc.host} is not in the cert's list: `.trimEnd(),
    );
  });

  it('a wrong tls_server_name is named with its value', async () => {
    const message = await failsAt(config(secure().replace('dc1.corp.example.test', 'ldap.corp.example.test') + '    bind_password: ${LDAP_PASSWORD}\n'), 'TLS');
    expect(message).toMatch(/^TLS with \S+ failed: the server's certificate does not name ldap\.corp\.example\.test; it names DC1\.corp\.example\.test \(its subject CN; it has no subjectAltName\): set tls_server_name \(now "ldap\.corp\.example\.test"\) to one of those names/);
  });

  it('LDAPS without the DC\'s CA: the TLS step names ca_file', async () => {
    const message = await failsAt(config(`    url: ${dc.ldapsUrl}\n    tls_server_name: dc1.corp.example.test\n    bind_dn: orgsync@corp.example.test\n    bind_password: \${LDAP_PASSWORD}\n`), 'TLS');
    expect(message).toMatch(
      /^TLS with \S+ failed: the server's certificate is not signed by a CA this system trusts \(no ca_file is set\): set ca_file to the PEM of the CA that signed it \(on Active Directory, the enterprise root CA's certificate\); the connection failed with: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
    );
  });

  it('nothing listening: the connect step names url', async () => {
    const message = await failsAt(config(`    url: ldaps://${dc.host}:1\n    ca_file: ${dc.caFile}\n    bind_dn: orgsync@corp.example.test\n    bind_password: \${LDAP_PASSWORD}\n`), 'connect');
    expect(message).toBe(`cannot connect to ldaps://${dc.host}:1: nothing listens on ${dc.host}:1: check url (host and port: 636 for ldaps://, 389 for ldap://); the connection failed with: ECONNREFUSED`);
  });

  it('52e, a wrong password: names bind_password and the environment variable it came from', async () => {
    const message = await failsAt(config(`${secure()}    bind_password: \${LDAP_PASSWORD}\n`), 'bind', { LDAP_PASSWORD: 'Wrong-Pass-1' });
    expect(message).toBe(
      `bind as orgsync@corp.example.test failed: the password is wrong (or no account has this name) (Active Directory sub-code 52e): set bind_password (read from $LDAP_PASSWORD) to the account's current password, and check bind_dn "orgsync@corp.example.test"; the server said: invalid credentials: ${adDiagnostic('52e')} (LDAP result 49)`,
    );
  });

  it('52e with the password from a file: names bind_password_file and its path', async () => {
    const message = await failsAt(config(`${secure()}    bind_password_file: wrong-password\n`), 'bind');
    expect(message).toContain(`set bind_password (read from file ${join(dir, 'wrong-password')} (bind_password_file)) to the account's current password`);
  });

  const subCodes: [string, string, string][] = [
    ['disabled', '533', 'the account is disabled (Active Directory sub-code 533): enable the account "disabled@corp.example.test" (bind_dn) in the directory, or set bind_dn to an enabled account'],
    ['expired', '701', 'the account has expired (accountExpires) (Active Directory sub-code 701): extend or clear the expiry date of the account "expired@corp.example.test" (bind_dn) in the directory, or set bind_dn to an account that has not expired'],
    [
      'must-change',
      '773',
      'the account must change its password before it may log on ("User must change password at next logon") (Active Directory sub-code 773): set a new password for the account "must-change@corp.example.test" (bind_dn) in the directory without that flag, and put it in bind_password (read from $LDAP_PASSWORD)',
    ],
    ['night-shift', '530', 'the account may not log on at this time of day (its logon hours) (Active Directory sub-code 530): allow the account "night-shift@corp.example.test" (bind_dn) to log on at all hours (logonHours) in the directory'],
    ['one-pc', '531', 'the account may not log on from this computer (its "log on to" workstations) (Active Directory sub-code 531): clear the workstations the account "one-pc@corp.example.test" (bind_dn) is limited to (userWorkstations) in the directory'],
  ];
  it.each(subCodes)('bind as %s: sub-code %s in plain words, with the setting to change', async (who, code, words) => {
    const message = await failsAt(config(`${secure(who)}    bind_password: \${LDAP_PASSWORD}\n`), 'bind');
    expect(message).toBe(`bind as ${who}@corp.example.test failed: ${words}; the server said: invalid credentials: ${adDiagnostic(code)} (LDAP result 49)`);
  });

  it('775, locked out after a wrong password: says to check bind_password before retrying', async () => {
    await failsAt(config(`${secure('locked')}    bind_password: \${LDAP_PASSWORD}\n`), 'bind', { LDAP_PASSWORD: 'Wrong-Pass-1' });
    const message = await failsAt(config(`${secure('locked')}    bind_password: \${LDAP_PASSWORD}\n`), 'bind');
    expect(message).toBe(
      `bind as locked@corp.example.test failed: the account is locked out (too many wrong passwords) (Active Directory sub-code 775): check bind_password (read from $LDAP_PASSWORD) first (each bind with a wrong one locks it again), then have the account "locked@corp.example.test" (bind_dn) unlocked in the directory or wait for the domain's lockout duration; the server said: invalid credentials: ${adDiagnostic('775')} (LDAP result 49)`,
    );
  });

  it.each([
    ['525', 'no account has this name (Active Directory sub-code 525): set bind_dn "ghost@corp.example.test" to the DN or userPrincipalName (user@domain) of an existing account'],
    ['532', 'the account\'s password has expired (Active Directory sub-code 532): set a new password for the account "ghost@corp.example.test" (bind_dn) in the directory (a service account\'s should not expire) and put it in bind_password (read from $LDAP_PASSWORD)'],
  ])('sub-code %s from a loopback double of a domain controller', async (code, words) => {
    const double = await adBindDouble(adDiagnostic(code));
    try {
      const message = await failsAt(config(`    url: ${double.url}\n    bind_dn: ghost@corp.example.test\n    bind_password: \${LDAP_PASSWORD}\n`), 'bind');
      expect(message).toBe(`bind as ghost@corp.example.test failed: ${words}; the server said: invalid credentials: ${adDiagnostic(code)} (LDAP result 49)`);
    } finally {
      await double.close();
    }
  });

  it('a members filter that finds nothing: the search step names members.filter and the bind account', async () => {
    const file = config(`${secure()}    bind_password: \${LDAP_PASSWORD}\n`, '(objectClass=inetOrgPerson)');
    const message = await failsAt(file, 'search of the members filter');
    expect(message).toBe(
      `members: the search under "${PEOPLE}" with (objectClass=inetOrgPerson) found no entry: check base_dn and members.filter, and that the account "orgsync@corp.example.test" (bind_dn) may read these entries`,
    );
  });
});
