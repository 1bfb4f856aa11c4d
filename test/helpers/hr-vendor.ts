/**
 * A stand-in for an HR vendor's API on loopback, with the real auth flows: an OAuth2 token endpoint (client
 * credentials with the secret in the form or as HTTP Basic; the JWT bearer grant of RFC 7523, whose assertion is
 * verified with jose against the service account's public key), HTTP Basic, and bearer tokens that expire by the
 * injected clock or are revoked after some uses, so a walk meets an expired token in its middle.
 *
 * Routes answer recorded payloads (test/fixtures/vendors/); every request is recorded with its headers.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify, type CryptoKey as JoseKey, type KeyObject } from 'jose';
import type { Clock } from '../../src/shared/clock.js';

/** One request the vendor saw. */
export interface VendorRequest {
  method: string;
  path: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the vendor authenticates API calls. */
export type VendorAuth =
  | { kind: 'none' }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'bearer-static'; token: string }
  | {
      kind: 'oauth';
      clients?: Record<string, string>;
      /** Accept `client_secret_basic` instead of the form body. */
      clientAuth?: 'post' | 'basic';
      /** The JWT bearer grant: the service account's public key, its e-mail, and the expected audience (default: the token URL). */
      jwt?: { key: JoseKey | KeyObject; issuer: string; audience?: string; subject: string; scope: string };
      lifetimeSeconds: number;
      /** The scope a client-credentials request must ask for (when set). */
      scope?: string;
      /** Revoke each token after this many API calls (401 mid-walk), besides its expiry by the clock. */
      revokeAfterUses?: number;
    };

/** A route: the JSON body for a GET of `url`, an Answer (another status, headers), or undefined for 404. */
export type Route = (url: URL) => unknown;

/** An answer other than 200 with a JSON body: a status (204 No Content past the last page), headers (X-Total-Count). */
export class Answer {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

const DAY = 86_400_000;

/**
 * A recorded payload's placeholders resolved for a world `shift` days before `today` (ms, midnight UTC): `{{BASE}}`
 * the double's address; `{{date:N}}`, `{{datetime:N}}`, `{{personio:N}}`, `{{odata:N}}` the date N days from today in
 * the vendor's form; `{{until:N|a|b}}` is `a` up to that day and `b` after it; `"{{until:N}}"` / `"{{since:N}}"` a
 * boolean (test/fixtures/vendors/<vendor>/SOURCE.md).
 */
export function resolvePayload(text: string, o: { today: number; shift: number; base: string }): string {
  const at = (n: string) => o.today + (Number(n) + o.shift) * DAY;
  const day = (n: string) => new Date(at(n)).toISOString().slice(0, 10);
  const happened = (n: string) => Number(n) + o.shift <= 0;
  return text
    .replaceAll('{{BASE}}', o.base)
    .replace(/"\{\{(since|until):([+-]?\d+)\}\}"/g, (_, k: string, n: string) => String(k === 'since' ? happened(n) : !happened(n)))
    .replace(/\{\{(since|until):([+-]?\d+)\|([^|}]*)\|([^}]*)\}\}/g, (_, k: string, n: string, a: string, b: string) => ((k === 'since') === happened(n) ? a : b))
    .replace(/\{\{date:([+-]?\d+)\}\}/g, (_, n: string) => day(n))
    .replace(/\{\{datetime:([+-]?\d+)\}\}/g, (_, n: string) => `${day(n)}T00:00:00Z`)
    .replace(/\{\{personio:([+-]?\d+)\}\}/g, (_, n: string) => `${day(n)}T00:00:00+01:00`)
    .replace(/\{\{odata:([+-]?\d+)\}\}/g, (_, n: string) => `/Date(${at(n)})/`);
}

/** A running vendor. */
export interface Vendor {
  base: string;
  tokenUrl: string;
  requests: VendorRequest[];
  /** Tokens issued, in order. */
  issued: string[];
  /** API calls answered 401 because the token had expired or was revoked. */
  rejected: number;
  close(): Promise<void>;
}

/** Starts a vendor on 127.0.0.1 port 0. `routes` maps a path to its answer. */
export async function startVendor(opts: { clock: Clock; auth: VendorAuth; routes: Record<string, Route>; tokenPath?: string }): Promise<Vendor> {
  const tokenPath = opts.tokenPath ?? '/oauth2/token';
  const tokens = new Map<string, { expires: number; uses: number }>();
  const vendor: Vendor = { base: '', tokenUrl: '', requests: [], issued: [], rejected: 0, close: async () => {} };
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));

  const issue = (res: ServerResponse, lifetime: number) => {
    const token = `at-${vendor.issued.length + 1}-${Math.random().toString(36).slice(2)}`;
    tokens.set(token, { expires: opts.clock.now() + lifetime * 1000, uses: 0 });
    vendor.issued.push(token);
    json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: lifetime });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url!, vendor.base);
        vendor.requests.push({ method: req.method!, path: url.pathname, url: req.url!, headers: req.headers, body });
        const auth = opts.auth;
        if (url.pathname === tokenPath && auth.kind === 'oauth') {
          if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return json(res, 400, { error: 'invalid_request' });
          const form = new URLSearchParams(body);
          const grant = form.get('grant_type');
          if (grant === 'client_credentials') {
            let id = form.get('client_id');
            let secret = form.get('client_secret');
            if (auth.clientAuth === 'basic') {
              const h = String(req.headers.authorization ?? '');
              if (!h.startsWith('Basic ')) return json(res, 401, { error: 'invalid_client', error_description: 'client authentication must be HTTP Basic' });
              const [u, p] = Buffer.from(h.slice(6), 'base64').toString('utf8').split(':');
              id = decodeURIComponent(u ?? '');
              secret = decodeURIComponent(p ?? '');
            }
            if (!id || auth.clients?.[id] === undefined || auth.clients[id] !== secret) return json(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
            if (auth.scope !== undefined && form.get('scope') !== auth.scope) return json(res, 400, { error: 'invalid_scope', error_description: `scope must be ${auth.scope}` });
            return issue(res, auth.lifetimeSeconds);
          }
          if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && auth.jwt) {
            try {
              const { payload } = await jwtVerify(form.get('assertion') ?? '', auth.jwt.key, {
                issuer: auth.jwt.issuer,
                audience: auth.jwt.audience ?? vendor.tokenUrl,
                subject: auth.jwt.subject,
                currentDate: new Date(opts.clock.now()),
              });
              if (payload.scope !== auth.jwt.scope) return json(res, 400, { error: 'invalid_scope', error_description: 'unexpected scope' });
            } catch (err) {
              return json(res, 400, { error: 'invalid_grant', error_description: `Invalid JWT: ${(err as Error).message}` });
            }
            return issue(res, auth.lifetimeSeconds);
          }
          return json(res, 400, { error: 'unsupported_grant_type' });
        }
        // The API: check the credentials first.
        const h = String(req.headers.authorization ?? '');
        if (auth.kind === 'basic') {
          const want = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
          if (h !== want) return json(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Basic realm="api"' });
        } else if (auth.kind === 'bearer-static') {
          if (h !== `Bearer ${auth.token}`) return json(res, 401, { error: 'unauthorized' });
        } else if (auth.kind === 'oauth') {
          const t = tokens.get(h.replace(/^Bearer /, ''));
          if (!h.startsWith('Bearer ') || !t || opts.clock.now() >= t.expires || (auth.revokeAfterUses !== undefined && t.uses >= auth.revokeAfterUses)) {
            vendor.rejected++;
            return json(res, 401, { error: { code: 'InvalidAuthenticationToken', message: 'Access token has expired or is not yet valid.' } }, { 'www-authenticate': 'Bearer error="invalid_token"' });
          }
          t.uses++;
        }
        const route = opts.routes[url.pathname];
        const answer = route?.(url);
        if (answer === undefined) return json(res, 404, { error: 'not found' });
        if (answer instanceof Answer) {
          if (answer.body === undefined) return res.writeHead(answer.status, answer.headers).end();
          return json(res, answer.status, answer.body, answer.headers);
        }
        json(res, 200, answer);
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  vendor.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  vendor.tokenUrl = `${vendor.base}${tokenPath}`;
  vendor.close = () => new Promise<void>((r) => server.close(() => r()));
  return vendor;
}
