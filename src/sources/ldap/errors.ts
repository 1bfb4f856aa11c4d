/**
 * LDAP failures in words that say where to fix them (issue 43): each message names what failed, says in plain words
 * why, names the setting to change (a secret with where it was read: `bind_password (read from $LDAP_PASSWORD)`),
 * and keeps the server's own words at the end (`the server said: ...`). Active Directory's bind sub-codes (`data
 * 52e` in the diagnostic message of result 49) are told apart; a TLS failure names `ca_file` or `tls_server_name`
 * with the names the certificate carries; a simple bind refused without TLS names `ldaps://` and `start_tls`.
 */
import type { LdapSourceConfig } from '../../config/sources.js';
import { certificateNames, isNotTls, UNTRUSTED_CA_CODES, type CertificateNames } from '../../shared/tls.js';
import { settingWithOrigin, type SourceReadContext } from '../context.js';

/** What a message about one LDAP source may name. */
export interface LdapFailureContext {
  source: LdapSourceConfig;
  /** The resolved path of ca_file, when set. */
  caPath: string | undefined;
  ctx: Pick<SourceReadContext, 'secretOrigin'>;
}

/** The server's (or node's) own words for an error: `invalid credentials: 80090308: ... (LDAP result 49)`. */
export function serverWords(err: unknown): string {
  const e = err as { code?: unknown; message?: string };
  if (typeof e.code === 'number') {
    const words = LDAP_RESULT_NAMES[e.code] ?? 'error';
    // ldapts ends its message with "Code: 0x31" (the result code again): the number is given once, below.
    const diag = (e.message ?? '').replace(/\s+/g, ' ').replace(/\s*Code: 0x[0-9a-f]+$/i, '').trim();
    return `${words}${diag ? `: ${diag}` : ''} (LDAP result ${e.code})`;
  }
  if (typeof e.code === 'string') return `${e.code}${e.message && !e.message.includes(e.code) ? `: ${e.message}` : ''}`;
  return e.message ?? String(err);
}

/** RFC 4511 result codes by number (ldapts names them by error class, which a bundler may rename). */
const LDAP_RESULT_NAMES: Record<number, string> = {
  1: 'operations error',
  2: 'protocol error',
  3: 'time limit exceeded',
  4: 'size limit exceeded',
  7: 'auth method not supported',
  8: 'strong auth required',
  11: 'admin limit exceeded',
  12: 'unavailable critical extension',
  13: 'confidentiality required',
  16: 'no such attribute',
  17: 'undefined type',
  18: 'inappropriate matching',
  32: 'no such object',
  34: 'invalid DN syntax',
  48: 'inappropriate auth',
  49: 'invalid credentials',
  50: 'insufficient access',
  51: 'busy',
  52: 'unavailable',
  53: 'unwilling to perform',
  80: 'other',
};

/** The end of every message: the server's own words (an LDAP result), or the connection's error. */
export function said(err: unknown): string {
  return typeof (err as { code?: unknown }).code === 'number' ? `; the server said: ${serverWords(err)}` : `; the connection failed with: ${serverWords(err)}`;
}

/**
 * Active Directory's bind sub-codes (the `data <hex>` of result 49): what each means, and what to change. Samba
 * answers 52e for an unknown account as well (it does not tell the two apart, so as not to confirm a name).
 */
const AD_SUBCODES: Record<string, { words: string; fix: (f: LdapFailureContext) => string }> = {
  '525': { words: 'no account has this name', fix: (f) => `set bind_dn ${quoted(f)} to the DN or userPrincipalName (user@domain) of an existing account` },
  '52e': { words: 'the password is wrong (or no account has this name)', fix: (f) => `set ${password(f)} to the account's current password, and check bind_dn ${quoted(f)}` },
  '530': { words: 'the account may not log on at this time of day (its logon hours)', fix: (f) => `allow ${account(f)} to log on at all hours (logonHours) in the directory` },
  '531': { words: 'the account may not log on from this computer (its "log on to" workstations)', fix: (f) => `clear the workstations ${account(f)} is limited to (userWorkstations) in the directory` },
  '532': { words: "the account's password has expired", fix: (f) => `set a new password for ${account(f)} in the directory (a service account's should not expire) and put it in ${password(f)}` },
  '533': { words: 'the account is disabled', fix: (f) => `enable ${account(f)} in the directory, or set bind_dn to an enabled account` },
  '701': { words: 'the account has expired (accountExpires)', fix: (f) => `extend or clear the expiry date of ${account(f)} in the directory, or set bind_dn to an account that has not expired` },
  '773': { words: 'the account must change its password before it may log on ("User must change password at next logon")', fix: (f) => `set a new password for ${account(f)} in the directory without that flag, and put it in ${password(f)}` },
  '775': {
    words: 'the account is locked out (too many wrong passwords)',
    fix: (f) => `check ${password(f)} first (each bind with a wrong one locks it again), then have ${account(f)} unlocked in the directory or wait for the domain's lockout duration`,
  },
};

/** The AD bind sub-code in a diagnostic message (`... AcceptSecurityContext error, data 52e, v1db1`), lower-case. */
export function adSubCode(err: unknown): string | undefined {
  const m = /\bdata ([0-9a-f]{3,8}),/i.exec((err as { message?: string }).message ?? '');
  return m?.[1]!.toLowerCase();
}

const quoted = (f: LdapFailureContext) => JSON.stringify(f.source.bind_dn ?? '');
const account = (f: LdapFailureContext) => `the account ${quoted(f)} (bind_dn)`;
function password(f: LdapFailureContext): string {
  return f.source.bind_password === undefined ? 'bind_password (not set)' : settingWithOrigin('bind_password', f.ctx);
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether an error is a TLS failure (certificate, name, handshake) rather than one of the network or the server. */
export function isTlsFailure(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (UNTRUSTED_CA_CODES.has(code) || code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'CERT_HAS_EXPIRED' || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || isNotTls(err));
}

/** Whether an error is one of reaching the server at all (refused, unreachable, unknown name, timed out). */
export function isConnectFailure(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  return (typeof e.code === 'string' && CONNECT_CODES.has(e.code)) || /connection timeout|timed out/i.test(String(e.message ?? '')) || e.name === 'TimeoutError';
}

/** Why a TLS handshake with the server failed and what to change (undefined: not a TLS failure). */
export function tlsFailure(err: unknown, f: LdapFailureContext): string | undefined {
  if (!isTlsFailure(err)) return undefined;
  const e = err as { code: string; host?: string; cert?: CertificateNames };
  const url = new URL(f.source.url);
  if (e.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const verified = f.source.tls_server_name ?? e.host ?? url.hostname;
    const setting = f.source.tls_server_name === undefined ? 'set tls_server_name' : 'set tls_server_name (now ' + JSON.stringify(f.source.tls_server_name) + ')';
    return `the server's certificate does not name ${verified}; it names ${certificateNames(e.cert)}: ${setting} to one of those names, or use one of them in url${said(err)}`;
  }
  if (UNTRUSTED_CA_CODES.has(e.code)) {
    const where = f.caPath ? `the CA in ca_file ${f.caPath}` : 'a CA this system trusts (no ca_file is set)';
    return `the server's certificate is not signed by ${where}: set ca_file to the PEM of the CA that signed it (on Active Directory, the enterprise root CA's certificate)${said(err)}`;
  }
  if (e.code === 'CERT_HAS_EXPIRED') return `the server's certificate has expired: renew it on the server (no setting of orgsync's can accept it)${said(err)}`;
  if (isNotTls(err)) return `the server does not speak TLS on port ${url.port || '636'}: use the server's LDAPS port (636) in url, or ldap:// with start_tls: true${said(err)}`;
  return `the TLS handshake failed: check ca_file and tls_server_name, and that the server offers TLS 1.2 or later${said(err)}`;
}

/** Why a TCP connection could not be made and what to change. */
export function connectFailure(err: unknown, f: LdapFailureContext): string {
  const code = (err as { code?: unknown }).code;
  const target = new URL(f.source.url);
  const at = `${target.hostname}:${target.port || (target.protocol === 'ldaps:' ? '636' : '389')}`;
  const why =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? `the name ${target.hostname} does not resolve`
      : code === 'ECONNREFUSED'
        ? `nothing listens on ${at}`
        : `${at} did not answer within connect_timeout_ms (${f.source.connect_timeout_ms} ms) or is unreachable`;
  return `${why}: check url (host and port: 636 for ldaps://, 389 for ldap://)${said(err)}`;
}

/** Why the server refused the bind and what to change. */
export function bindFailure(err: unknown, f: LdapFailureContext): string {
  const code = (err as { code?: unknown }).code;
  if (code === 8 || code === 13) {
    const host = new URL(f.source.url).hostname;
    return `the server refuses a simple bind on a connection without TLS (Active Directory does by default): set url to ldaps://${host}:636, or start_tls: true, with ca_file naming the CA of the server's certificate${said(err)}`;
  }
  if (code === 49) {
    const sub = adSubCode(err);
    const known = sub === undefined ? undefined : AD_SUBCODES[sub];
    if (known) return `${known.words} (Active Directory sub-code ${sub}): ${known.fix(f)}${said(err)}`;
    return `the server refused the name or password: check bind_dn ${quoted(f)} and ${password(f)}${said(err)}`;
  }
  if (code === 48 || code === 53) return `the server does not accept this bind (anonymous or unauthenticated binds are often refused): set bind_dn and bind_password${said(err)}`;
  return `the bind failed: check bind_dn ${quoted(f)} and ${password(f)}${said(err)}`;
}

/** Why a search found nothing or failed, when the cause is access: what the bind DN needs. */
export function searchAccessFailure(err: unknown, f: LdapFailureContext, base: string, entity: string): string | undefined {
  const code = (err as { code?: unknown }).code;
  const setting = f.source[entity as 'members' | 'departments' | 'positions'] && (f.source[entity as 'members'] as { base_dn?: string }).base_dn !== undefined ? `${entity}.base_dn` : 'base_dn';
  if (code === 32) return `the base DN "${base}" does not exist (or ${f.source.bind_dn ? `the account ${quoted(f)}` : 'an anonymous bind'} may not see it): check ${setting}${said(err)}`;
  if (code === 50) return `${f.source.bind_dn ? `the account ${quoted(f)}` : 'an anonymous bind'} may not search there: grant it read access, or set bind_dn to an account that has it${said(err)}`;
  if (code === 1 && /bind|successful bind must be completed/i.test((err as Error).message ?? '')) return `the server wants a bind before a search: set bind_dn and bind_password${said(err)}`;
  return undefined;
}
