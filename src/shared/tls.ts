/** Recognising TLS failures in errors of node:tls and undici, for messages that name the setting to change. */

/** True when a TLS handshake met a server that answered in plain text (OpenSSL's "wrong version number"). */
export function isNotTls(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let cur = e, depth = 0; cur && depth < 4; cur = cur.cause as typeof e, depth++) {
    if (cur.code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (typeof cur.message === 'string' && /wrong version number/i.test(cur.message))) return true;
  }
  return false;
}
