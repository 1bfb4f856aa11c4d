/**
 * HTTP source failures in words that say where to fix them (issue 43), as the platform's credential errors do: a
 * 401 or 403 names the `auth` setting (with the environment variable or file its secret was read from) and the
 * permission the source's preset needs; a TLS failure names `ca_file` (or the names the certificate carries). The
 * server's own words (the start of the response body) come after it.
 */
import type { HttpAuthConfig } from '../../config/sources.js';
import { certificateNames, UNTRUSTED_CA_CODES, tlsVerifyError } from '../../shared/tls.js';
import type { SourceReadContext } from '../context.js';

/** What an HTTP source's messages may name. */
export interface HttpFailureSource {
  auth?: HttpAuthConfig | undefined;
  preset?: string | undefined;
  ca_file?: string | undefined;
}

/** What each preset's credential must be allowed to do (docs/sources/<preset>.md says how to grant it). */
export const PRESET_PERMISSIONS: Record<string, string> = {
  'microsoft-graph': 'the app registration needs the Microsoft Graph application permission User.Read.All, with admin consent',
  scim: "the token needs read access to the SCIM server's /Users",
  'google-workspace': 'the service account needs domain-wide delegation for https://www.googleapis.com/auth/admin.directory.user.readonly, and subject must be an admin who may read users',
  bamboohr: "the API key's user needs an access level that may run custom reports and see every field the report asks for",
  personio: 'the API credentials need read access to employees and to every attribute mapped (Settings > Integrations > API credentials)',
  hibob: "the service user needs a permission group that may read People's data (every field mapped)",
  'workday-raas': 'the integration system user (ISU) needs to be allowed to run the report (its security group on the report and its data sources)',
  'sap-successfactors': "the API user's permission role needs OData API read access to the User entity",
};

/** The auth setting in force, with where its secret was read: `auth (bearer; auth.token read from $HRIS_TOKEN)`. */
function authSetting(source: HttpFailureSource, ctx: Pick<SourceReadContext, 'secretOrigin'>): string {
  const auth = source.auth;
  if (!auth) return 'no auth is set: set auth';
  const secret = { bearer: 'auth.token', basic: 'auth.password', 'oauth2-client-credentials': 'auth.client_secret', 'google-service-account': 'auth.key_file' }[auth.type];
  const who = auth.type === 'basic' ? `, user ${JSON.stringify(auth.username)}` : auth.type === 'oauth2-client-credentials' ? `, client_id ${JSON.stringify(auth.client_id)}` : '';
  const origin = auth.type === 'google-service-account' ? `file ${auth.key_file}` : ctx.secretOrigin?.(secret);
  const from = origin === undefined ? secret : `${secret} read from ${origin}`;
  return `auth (${auth.type}${who}; ${from})`;
}

/** The server's words: the start of the body, on one line. */
function bodyWords(body: string): string {
  const one = body.replace(/\s+/g, ' ').trim();
  return one === '' ? '(an empty body)' : one.length > 300 ? `${one.slice(0, 300)}...` : one;
}

/** The end of a 401 or 403 message: what was refused, the setting and the permission; the server's words. */
export function authFailure(status: number, body: string, source: HttpFailureSource, ctx: Pick<SourceReadContext, 'secretOrigin'>): string {
  const permission = (source.preset && PRESET_PERMISSIONS[source.preset]) ?? 'the credential needs read access to this URL';
  const setting = authSetting(source, ctx);
  const why =
    status === 401
      ? `the HR system refused the credential: check ${setting}: it must be current (not revoked or expired) and of this tenant, and ${permission}`
      : `the credential is valid but may not read this: ${permission}; the credential is ${setting}`;
  return `: ${why}; the server said: ${bodyWords(body)}`;
}

/** The end of a message for a TLS failure of an HTTPS request (undefined: not one). */
export function httpTlsFailure(err: unknown, url: URL, caPath: string | undefined): string | undefined {
  const tls = tlsVerifyError(err);
  if (!tls) return undefined;
  if (tls.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `: the server's certificate does not name ${url.hostname}; it names ${certificateNames(tls.cert)}: use one of those names in the url; the connection failed with: ${tls.code}: ${tls.message}`;
  if (tls.code === 'CERT_HAS_EXPIRED') return `: the server's certificate has expired: it must be renewed on the server; the connection failed with: ${tls.code}`;
  if (UNTRUSTED_CA_CODES.has(tls.code)) {
    const where = caPath ? `the CA in ca_file ${caPath}` : 'a CA this system trusts (no ca_file is set)';
    return `: the server's certificate is not signed by ${where}: set ca_file to the PEM of the CA that signed it (an internal CA, or the TLS-inspecting proxy's); the connection failed with: ${tls.code}: ${tls.message}`;
  }
  return undefined;
}
