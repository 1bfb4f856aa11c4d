/**
 * TLS of the daemon's listener (metrics.tls): the certificate and key files, read again when they change so that a
 * renewed certificate (cert-manager rotating a Secret) applies to the next connection without a restart.
 */
import { statSync, readFileSync } from 'node:fs';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import { OrgsyncError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';

/** The files of metrics.tls, resolved to paths. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** What the files looked like when last read: a change in either reloads them. */
function stamp(files: TlsFiles): string {
  const parts: string[] = [];
  for (const f of [files.certFile, files.keyFile]) {
    const s = statSync(f, { throwIfNoEntry: false });
    parts.push(s ? `${s.ino}:${s.size}:${s.mtimeMs}` : 'missing');
  }
  return parts.join('|');
}

/** Reads the pair; a missing file or a key that does not fit the certificate is an OrgsyncError naming metrics.tls. */
export function readTlsPair(files: TlsFiles): { cert: Buffer; key: Buffer } {
  let pair: { cert: Buffer; key: Buffer };
  try {
    pair = { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new OrgsyncError('CONFIG_INVALID', `metrics.tls: cannot read ${e.path ?? files.certFile}: ${e.code ?? e.message}`, { cause: err });
  }
  try {
    createSecureContext(pair);
  } catch (err) {
    throw new OrgsyncError('CONFIG_INVALID', `metrics.tls: ${files.certFile} and ${files.keyFile} are not a PEM certificate and its key: ${(err as Error).message}`, { cause: err });
  }
  return pair;
}

/**
 * Watches the pair for `server`: `refresh()` (called as each connection arrives, before its handshake) compares the
 * files' inode, size and mtime with the last read and, when they changed, installs the new pair. A pair that does
 * not load (a half-written renewal) keeps the previous one and is logged once per change.
 */
export function tlsReloader(files: TlsFiles, logger: Logger | undefined): { initial: { cert: Buffer; key: Buffer }; refresh(server: TlsServer): void } {
  const initial = readTlsPair(files);
  let last = stamp(files);
  return {
    initial,
    refresh(server) {
      const now = stamp(files);
      if (now === last) return;
      last = now;
      try {
        server.setSecureContext(readTlsPair(files));
        logger?.info({ cert_file: files.certFile }, 'metrics.tls: certificate reloaded');
      } catch (err) {
        logger?.warn({ cert_file: files.certFile, error: (err as Error).message }, 'metrics.tls: the changed files do not load; keeping the previous certificate');
      }
    },
  };
}
