/**
 * Opening an LDAP source: the connection, TLS (ldaps:// or StartTLS, the CA always verified) and the simple bind.
 * A failure is a SOURCE_UNREADABLE error whose message says where to fix it (./errors.ts) and whose details name
 * the step that failed (`connect`, `TLS`, `bind`), which `orgsync sources check` reports.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client } from 'ldapts';
import type { LdapSourceConfig } from '../../config/sources.js';
import type { OrgsyncError } from '../../shared/errors.js';
import { sourceUnreadable, type SourceReadContext } from '../context.js';
import { bindFailure, connectFailure, isConnectFailure, isTlsFailure, serverWords, tlsFailure, type LdapFailureContext } from './errors.js';

/** The checks of an LDAP source, in the order they run (`sources check` names the one that failed). */
export const LDAP_CHECK_STEPS = ['connect', 'TLS', 'bind', 'search of the members filter', 'read of the watermark attribute'] as const;
export type LdapCheckStep = (typeof LDAP_CHECK_STEPS)[number];

/** An LDAP source's failure at one step. */
export function stepFailure(source: LdapSourceConfig, step: LdapCheckStep, detail: string, cause?: unknown): OrgsyncError {
  return sourceUnreadable(source.name, detail, cause, { step });
}

/** The step an error met by any operation (the first one connects, and makes the TLS handshake of ldaps://) belongs to. */
export function failureOf(err: unknown, f: LdapFailureContext, subject: string, step: LdapCheckStep): OrgsyncError {
  if (isConnectFailure(err)) return stepFailure(f.source, 'connect', `cannot connect to ${f.source.url}: ${connectFailure(err, f)}`, err);
  const tls = tlsFailure(err, f);
  if (tls !== undefined) return stepFailure(f.source, 'TLS', `TLS with ${f.source.url} failed: ${tls}`, err);
  return stepFailure(f.source, step, `${subject} failed: ${step === 'bind' ? bindFailure(err, f) : String(err)}`, err);
}

/** The TLS options of a source: its CA (ca_file) and the name to verify (tls_server_name, else the URL's host name). */
async function tlsOptions(source: LdapSourceConfig, ctx: SourceReadContext): Promise<{ tls: ConnectionOptions; caPath: string | undefined }> {
  const url = new URL(source.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const tls: ConnectionOptions = { rejectUnauthorized: true, host };
  const serverName = source.tls_server_name ?? (isIP(host) ? undefined : host);
  // node verifies the certificate against `servername` when it is set, else against the host connected to.
  if (serverName) tls.servername = serverName;
  const caPath = source.ca_file ? ctx.resolvePath(source.ca_file) : undefined;
  if (caPath !== undefined) {
    try {
      tls.ca = [await readFile(caPath)];
    } catch (err) {
      throw stepFailure(source, 'TLS', `cannot read ca_file ${caPath}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
    }
  }
  return { tls, caPath };
}

/** An open, bound connection to the source, and what its messages may name. */
export interface OpenLdap {
  client: Client;
  failure: LdapFailureContext;
}

/** Connects, makes TLS (ldaps:// or StartTLS) and binds; each failure names its step and the setting to change. */
export async function openLdap(source: LdapSourceConfig, ctx: SourceReadContext): Promise<OpenLdap> {
  const { tls, caPath } = await tlsOptions(source, ctx);
  const failure: LdapFailureContext = { source, caPath, ctx };
  const secure = new URL(source.url).protocol === 'ldaps:';
  const client = new Client({ url: source.url, timeout: source.timeout_ms, connectTimeout: source.connect_timeout_ms, strictDN: false, ...(secure ? { tlsOptions: tls } : {}) });
  if (source.start_tls && !secure) {
    try {
      await client.startTLS(tls);
    } catch (err) {
      await client.unbind().catch(() => {});
      if (isConnectFailure(err) || isTlsFailure(err)) throw failureOf(err, failure, 'StartTLS', 'TLS');
      // An LDAP answer to the StartTLS request: the server does not offer it.
      throw stepFailure(source, 'TLS', `StartTLS with ${source.url} failed: the server does not offer StartTLS: use ldaps:// (port 636) instead of start_tls; the server said: ${serverWords(err)}`, err);
    }
  }
  if (source.bind_dn) {
    try {
      await client.bind(source.bind_dn, source.bind_password ?? '');
    } catch (err) {
      await client.unbind().catch(() => {});
      throw failureOf(err, failure, `bind as ${source.bind_dn}`, 'bind');
    }
  }
  return { client, failure };
}
