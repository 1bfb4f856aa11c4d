/**
 * Which addresses the config may name, and over which transports credentials may travel (issue 44).
 *
 * - URLs of the platform, of HTTP sources, token endpoints, webhooks and the Pushgateway are http(s) only; LDAP URLs
 *   are ldap(s) only (their schema says so).
 * - A credential never crosses a network in clear by default: `http://` for the platform (the API key), for an HTTP
 *   source that authenticates (auth, headers, user-info) or for a token endpoint, and `ldap://` without `start_tls` for
 *   an LDAP source that binds with a password, are refused unless the host is the loopback interface. The opt-out,
 *   for a lab, is `allow_insecure_transport: true` on that block (or at the top of the file, for every block); while
 *   it is in effect every command warns about it (`insecureTransportWarnings`).
 */
import { isIP } from 'node:net';
import { z } from 'zod';

/** The setting that allows plaintext transport for a block (or, at the top of the file, for all of them). */
export const INSECURE_TRANSPORT_KEY = 'allow_insecure_transport';

/** The message of a URL that is not http(s). */
export const HTTP_URL_MESSAGE = 'expected an http:// or https:// URL';

/** An http(s) URL (no file:, ftp:, javascript: or other scheme). */
export function httpUrlSchema(): z.ZodURL {
  return z.url({ protocol: /^https?$/, error: HTTP_URL_MESSAGE });
}

/** `allow_insecure_transport` of a block. */
export const insecureTransportSchema = z
  .boolean()
  // Optional, not defaulted: an absent key leaves a source's config hash (its delta snapshot) as it was.
  .optional()
  .describe(
    'LABS ONLY. true: allow this block\'s credentials (API key, bind password, tokens) to cross the network in clear: http:// to a host other than the loopback interface, or ldap:// without start_tls. Every command then warns about it. Default false: such a config is refused, naming the secure setting (https://, ldaps:// or start_tls: true).',
  );

/** Whether `hostname` (as the URL parser gives it) is the loopback interface: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/** The plaintext scheme and host of `url` when it is plaintext to a host other than loopback; undefined otherwise. */
function plaintextRemote(url: string | undefined, plaintext: 'http:' | 'ldap:'): string | undefined {
  if (url === undefined || url === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined; // the schema reports it
  }
  return parsed.protocol === plaintext && !isLoopbackHost(parsed.hostname) ? parsed.hostname : undefined;
}

/** A place where a credential would cross the network in clear. */
export interface InsecureTransport {
  /** The config path of the URL (`platform.base_url`, `sources[1].url`). */
  path: (string | number)[];
  host: string;
  /** What would cross: `the API key`, `the bind password`, `the source's credentials`. */
  secret: string;
  /** The secure setting to use instead. */
  fix: string;
  /** Whether the block (or the file) allows it. */
  allowed: boolean;
}

/** The parts of the config this check reads (loose: it runs on the parsed config inside the schema's refinement). */
interface TransportConfig {
  allow_insecure_transport?: boolean;
  platform?: { base_url?: string; allow_insecure_transport?: boolean };
  sources?: readonly Record<string, unknown>[];
  metrics?: { pushgateway_url?: string };
  notify?: { webhooks?: readonly { url?: string }[] };
}

const HRIS_ENTITIES = ['departments', 'positions', 'members'] as const;

/** The URLs of an HRIS source that carry its credentials when it has any (auth, headers). */
function hrisUrls(source: Record<string, unknown>): { path: (string | number)[]; url: string | undefined; alwaysSecret?: boolean }[] {
  const out: { path: (string | number)[]; url: string | undefined; alwaysSecret?: boolean }[] = [{ path: ['base_url'], url: source.base_url as string | undefined }];
  for (const e of HRIS_ENTITIES) {
    const entity = source[e] as { url?: string; delta?: { url?: string } | false } | undefined;
    if (!entity) continue;
    out.push({ path: [e, 'url'], url: entity.url });
    if (entity.delta) out.push({ path: [e, 'delta', 'url'], url: entity.delta.url });
  }
  const auth = source.auth as { token_url?: string } | undefined;
  // A token endpoint is sent the client secret, whatever else the source sends.
  if (auth?.token_url) out.push({ path: ['auth', 'token_url'], url: auth.token_url, alwaysSecret: true });
  return out;
}

/** The HTTP places of source `i` where its credentials would cross in clear. */
function hrisInsecure(source: Record<string, unknown>, i: number, allowAll: boolean): InsecureTransport[] {
  const headers = source.headers as Record<string, string> | undefined;
  const credentialed = source.auth !== undefined || (headers !== undefined && Object.keys(headers).length > 0);
  const allowed = allowAll || source.allow_insecure_transport === true;
  const out: InsecureTransport[] = [];
  for (const u of hrisUrls(source)) {
    const userInfo = u.url !== undefined && /^[a-z]+:\/\/[^/?#]*@/i.test(u.url);
    if (!credentialed && !userInfo && !u.alwaysSecret) continue;
    const host = plaintextRemote(u.url, 'http:');
    if (host) out.push({ path: ['sources', i, ...u.path], host, secret: u.alwaysSecret ? 'the client secret' : "the source's credentials (auth, headers)", fix: 'use https://', allowed });
  }
  return out;
}

/** The LDAP place of source `i`: ldap:// without start_tls to a remote host while binding with a password. */
function ldapInsecure(source: Record<string, unknown>, i: number, allowAll: boolean): InsecureTransport[] {
  if (source.bind_dn === undefined || source.start_tls === true) return [];
  const host = plaintextRemote(source.url as string | undefined, 'ldap:');
  if (!host) return [];
  return [{ path: ['sources', i, 'url'], host, secret: 'the bind DN and password', fix: 'use ldaps:// or start_tls: true', allowed: allowAll || source.allow_insecure_transport === true }];
}

/** The Pushgateway and the webhooks: no credential of their own, but a password in a URL's user-info is one. */
function userInfoInsecure(config: TransportConfig, allowAll: boolean): InsecureTransport[] {
  const urls: { path: (string | number)[]; url: string | undefined }[] = [{ path: ['metrics', 'pushgateway_url'], url: config.metrics?.pushgateway_url }];
  (config.notify?.webhooks ?? []).forEach((w, i) => urls.push({ path: ['notify', 'webhooks', i, 'url'], url: w.url }));
  const out: InsecureTransport[] = [];
  for (const u of urls) {
    const host = u.url !== undefined && /^[a-z]+:\/\/[^/?#]*@/i.test(u.url) ? plaintextRemote(u.url, 'http:') : undefined;
    if (host) out.push({ path: u.path, host, secret: 'the user-info of the URL', fix: 'use https://', allowed: allowAll });
  }
  return out;
}

/** Every place of the config where a credential would cross the network in clear, allowed or not. */
export function insecureTransports(config: TransportConfig): InsecureTransport[] {
  const allowAll = config.allow_insecure_transport === true;
  const out: InsecureTransport[] = userInfoInsecure(config, allowAll);
  const platformHost = plaintextRemote(config.platform?.base_url, 'http:');
  if (platformHost) {
    out.push({ path: ['platform', 'base_url'], host: platformHost, secret: 'the API key', fix: 'use https://', allowed: allowAll || config.platform?.allow_insecure_transport === true });
  }
  (config.sources ?? []).forEach((source, i) => {
    const found = source.type === 'ldap' ? ldapInsecure(source, i, allowAll) : source.type === 'hris-json' || source.type === undefined ? hrisInsecure(source, i, allowAll) : [];
    for (const t of found) out.push(t);
  });
  return out;
}

/** Where `allow_insecure_transport` allows the place at `path`: `platform.`, `sources[1].`, or the top of the file. */
function blockOf(path: readonly (string | number)[]): string {
  if (path[0] === 'sources') return `sources[${path[1]}].`;
  return path[0] === 'platform' ? 'platform.' : '';
}

/** The refusal of a place not allowed (one line; the loader prefixes file:line:col and the path). */
export function insecureTransportMessage(t: InsecureTransport): string {
  const scheme = t.fix.includes('ldaps') ? 'ldap://' : 'http://';
  return `${scheme} to ${t.host} would send ${t.secret} across the network in clear: ${t.fix} (only the loopback interface may be reached in clear; for a lab, ${blockOf(t.path) || 'the top-level '}${INSECURE_TRANSPORT_KEY}: true allows it, loudly)`;
}

/** One warning per place an `allow_insecure_transport` lets a credential cross the network in clear (every command prints or logs them). */
export function insecureTransportWarnings(config: TransportConfig): string[] {
  return insecureTransports(config)
    .filter((t) => t.allowed)
    .map((t) => `${formatTransportPath(t.path)}: ${INSECURE_TRANSPORT_KEY}: true lets ${t.secret} cross the network to ${t.host} in clear, readable by anyone on the path (labs only; otherwise ${t.fix})`);
}

/** `sources[1].members.url`. */
function formatTransportPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Adds one issue per place a credential would cross the network in clear without an opt-out (the schema's refinement). */
export function refineTransport(config: TransportConfig, ctx: z.RefinementCtx): void {
  for (const t of insecureTransports(config)) if (!t.allowed) ctx.addIssue({ code: 'custom', message: insecureTransportMessage(t), path: t.path });
}
