/**
 * Which routes of the daemon's listener carry personal data, and the bearer token that opens them (issue 29).
 * Open routes (/metrics, /healthz, /readyz, /status) carry counts, digests and ids only; personal routes (the plan,
 * a run, a record's history) need `Authorization: Bearer <daemon.read_token_file>`.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog } from './burst-log.js';
import { resolveConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { TlsFiles } from './listener-tls.js';

/** The config key whose file holds the read token (named in the 404 and 401 answers). */
export const READ_TOKEN_KEY = 'daemon.read_token_file';

/** The routes that need no token: they carry no personal data. */
export const OPEN_ROUTES = ['/metrics', '/healthz', '/readyz', '/status'] as const;

/** A route of the listener by sensitivity, with its template (the `route` label of orgsync_http_unauthorized_total). */
export type RouteClass = { kind: 'open'; route: string } | { kind: 'personal'; route: string } | { kind: 'other' };

/** Classifies a GET path: open, personal (with its bounded route template, never the id in it), or other. */
export function routeClassOf(method: string, path: string): RouteClass {
  if ((OPEN_ROUTES as readonly string[]).includes(path)) return { kind: 'open', route: path };
  if (method !== 'GET' && method !== 'HEAD') return { kind: 'other' };
  if (path === '/plan' || path === '/plan.json') return { kind: 'personal', route: path };
  if (/^\/runs\/[^/]+$/.test(path)) return { kind: 'personal', route: '/runs/<id>' };
  if (/^\/records\/.+\/history$/.test(path)) return { kind: 'personal', route: '/records/<selector>/history' };
  return { kind: 'other' };
}

/** The token of an `Authorization: Bearer <token>` header, or "" when there is none. */
export function bearerOf(authorization: string | undefined): string {
  return /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
}

/** Whether `given` equals `expected`, in constant time whatever their lengths (both hashed to 32 bytes first). */
export function tokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length > 0;
}

/** How the listener guards its personal routes. */
export interface ReadAccess {
  /** The read token, read at each request; absent: the personal routes are closed (404 naming the key). */
  readToken?: () => string;
  /** Told of each 401, with the route template. */
  onUnauthorized?: (route: string) => void;
}

/** What the daemon's listener is given to protect itself: the read token and its TLS files (from the config). */
export interface ListenerSecurity {
  readToken?: () => string;
  tls?: TlsFiles;
}

/** An HTTP answer of the guard. */
export interface GuardAnswer {
  status: number;
  body: { error: { code: string; message: string } };
}

/**
 * The answer to a request for a personal route when it may not be served: 404 when no read token is configured,
 * 401 (counted) for a missing or wrong one; undefined when the token matches.
 */
export function guardPersonalRoute(access: ReadAccess | undefined, route: string, authorization: string | undefined): GuardAnswer | undefined {
  if (!access?.readToken) {
    return { status: 404, body: { error: { code: 'not_found', message: `${route} carries personal data and is served only with a read token: set ${READ_TOKEN_KEY}` } } };
  }
  if (tokenMatches(bearerOf(authorization), access.readToken())) return undefined;
  access.onUnauthorized?.(route);
  return { status: 401, body: { error: { code: 'unauthorized', message: `${route} requires a bearer token from ${READ_TOKEN_KEY}` } } };
}

/**
 * A token read from `file` at each call (a rotated Secret applies at once). An unreadable or empty file yields a
 * random value that no request carries, so every request is refused; that is logged as an error naming `key`, once
 * per burst of requests (issue 44: an empty file must not write a line per request).
 */
export function tokenFileReader(file: string, key: string, logger: Logger, clock?: Clock): () => string {
  const burst = new BurstLog(clock);
  return () => {
    let problem: string;
    try {
      const token = readFileSync(file, 'utf8').trim();
      if (token !== '') return token;
      problem = 'empty';
    } catch (err) {
      problem = (err as NodeJS.ErrnoException).code ?? String(err);
    }
    burst.hit((unlogged) => logger.error({ key, file, problem, ...(unlogged > 0 ? { refused_unlogged: unlogged } : {}) }, 'token file unusable: every request it guards is refused'));
    return `\u0000unset:${randomUUID()}`;
  };
}

/** The listener's security from the config: daemon.read_token_file (read at each request) and metrics.tls. */
export function listenerSecurityOf(config: Pick<Config, 'daemon' | 'metrics' | 'meta'>, logger: Logger, clock?: Clock): ListenerSecurity {
  const tokenFile = config.daemon.read_token_file;
  const tls = config.metrics.tls;
  return {
    ...(tokenFile ? { readToken: tokenFileReader(resolveConfigPath(config, tokenFile), READ_TOKEN_KEY, logger, clock) } : {}),
    ...(tls ? { tls: { certFile: resolveConfigPath(config, tls.cert_file), keyFile: resolveConfigPath(config, tls.key_file) } } : {}),
  };
}
