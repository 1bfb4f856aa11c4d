/** Recognising TLS failures in errors of node:tls and undici, for messages that name the setting to change. */

/** True when a TLS handshake met a server that answered in plain text (OpenSSL's "wrong version number"). */
export function isNotTls(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let cur = e, depth = 0; cur && depth < 4; cur = cur.cause as typeof e, depth++) {
    if (cur.code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (typeof cur.message === 'string' && /wrong version number/i.test(cur.message))) return true;
  }
  return false;
}

/** node:tls codes of a server certificate that no trusted CA signed. */
export const UNTRUSTED_CA_CODES: ReadonlySet<string> = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'DEPTH_ZERO_SELF_SIGNED_CERT']);

/** The node:tls verification error in an error or its causes (undici wraps them): its code, host and certificate. */
export function tlsVerifyError(err: unknown): { code: string; host?: string; cert?: CertificateNames; message: string } | undefined {
  let cur = err as { code?: unknown; cause?: unknown; host?: unknown; cert?: unknown; message?: unknown } | undefined;
  for (let depth = 0; cur && depth < 4; cur = cur.cause as typeof cur, depth++) {
    const code = cur.code;
    if (typeof code === 'string' && (UNTRUSTED_CA_CODES.has(code) || code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'CERT_HAS_EXPIRED')) {
      return { code, message: String(cur.message ?? code), ...(typeof cur.host === 'string' ? { host: cur.host } : {}), ...(cur.cert ? { cert: cur.cert as CertificateNames } : {}) };
    }
  }
  return undefined;
}

/** What certificateNames reads of a peer certificate. */
export interface CertificateNames {
  subjectaltname?: string | undefined;
  subject?: { CN?: string | string[] | undefined } | undefined;
}

/** The names a certificate carries: its subjectAltName entries, else its subject CN. */
export function certificateNames(cert: CertificateNames | undefined): string {
  const alt = cert?.subjectaltname?.split(/,\s*/).filter((n) => n !== '') ?? [];
  if (alt.length > 0) return alt.map((n) => n.replace(/^DNS:/, '').replace(/^IP Address:/, 'IP ')).join(', ');
  const cn = cert?.subject?.CN;
  const name = Array.isArray(cn) ? cn.join(', ') : cn;
  return name ? `${name} (its subject CN; it has no subjectAltName)` : 'no name at all';
}
