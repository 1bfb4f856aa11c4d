/**
 * `auth:` of an HTTP source: the Authorization header of each request. Static kinds (bearer, basic) are a
 * header; token kinds (OAuth2 client credentials, a Google service account's JWT bearer assertion) fetch a token
 * with oauth4webapi, keep it until shortly before `expires_in`, and fetch again on expiry or after one 401.
 * Tokens and secrets are never logged and never put in a message; a failed token request fails the source with
 * one line naming the token URL and the OAuth error.
 */
import { readFile } from 'node:fs/promises';
import * as oauth from 'oauth4webapi';
import { importPKCS8, SignJWT } from 'jose';
import type { HttpAuthConfig } from '../../config/sources.js';
import { monotonicNow } from '../../shared/clock.js';
import { registerSecrets } from '../../shared/redact.js';
import { sourceUnreadable, type SourceReadContext } from '../context.js';

/** Gives the Authorization header for requests to the source's own origin. */
export interface AuthProvider {
  /** The header value (`Bearer ...`, `Basic ...`), fetching a token when none is held or it is about to expire. */
  authorization(): Promise<string>;
  /** Drops a held token (the API answered 401): the next `authorization()` fetches a fresh one. */
  invalidate(): void;
  /** True when `invalidate` can help (a token kind). */
  readonly refreshable: boolean;
}

interface HeldToken {
  value: string;
  /** When to stop using it (ms since epoch); undefined: until a 401. */
  renewAt: number | undefined;
}

/**
 * Tokens held between runs (the daemon reads every few minutes; a token lives an hour). Keyed by everything that
 * identifies the grant, including a digest-free copy of the secret's identity: the client id and token URL.
 */
const held = new Map<string, HeldToken>();

/** Forgets every held token (tests). */
export function clearHeldTokens(): void {
  held.clear();
}

/** Stop using a token this long before it expires: a request that starts just before the end must not carry a dead token. */
export function renewMargin(expiresInSeconds: number): number {
  return Math.min(60_000, Math.floor((expiresInSeconds * 1000) / 10));
}

/** The token URL as shown in messages: no query, no userinfo. */
function shownTokenUrl(u: string): string {
  const url = new URL(u);
  return `${url.origin}${url.pathname}`;
}

function describeOAuthError(err: unknown): string {
  if (err instanceof oauth.ResponseBodyError) return `${err.error}${err.error_description ? ` (${err.error_description.replace(/\s+/g, ' ').trim()})` : ''}, HTTP ${err.status}`;
  if (err instanceof oauth.WWWAuthenticateChallengeError) return `HTTP ${err.status} with a WWW-Authenticate challenge`;
  if (err instanceof oauth.OperationProcessingError) return err.message;
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  return e.cause?.code ?? e.code ?? e.message ?? String(err);
}

/** Builds the provider of a source's `auth:` (none: no header). */
export function authProvider(sourceName: string, auth: HttpAuthConfig | undefined, ctx: SourceReadContext, timeoutMs: number): AuthProvider | undefined {
  if (!auth) return undefined;
  switch (auth.type) {
    case 'bearer':
      return { authorization: () => Promise.resolve(`Bearer ${auth.token}`), invalidate: () => {}, refreshable: false };
    case 'basic': {
      const value = `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
      return { authorization: () => Promise.resolve(value), invalidate: () => {}, refreshable: false };
    }
    case 'oauth2-client-credentials': {
      const key = ['cc', auth.token_url, auth.client_id, auth.scope ?? '', auth.audience ?? '', JSON.stringify(auth.extra_params)].join('\0');
      return tokenProvider(key, ctx, async () => {
        const as: oauth.AuthorizationServer = { issuer: new URL(auth.token_url).origin, token_endpoint: auth.token_url };
        const client: oauth.Client = { client_id: auth.client_id };
        const clientAuth = auth.client_auth === 'basic' ? oauth.ClientSecretBasic(auth.client_secret) : oauth.ClientSecretPost(auth.client_secret);
        const params: Record<string, string> = { ...auth.extra_params };
        if (auth.scope !== undefined) params.scope = auth.scope;
        if (auth.audience !== undefined) params.audience = auth.audience;
        try {
          const res = await oauth.clientCredentialsGrantRequest(as, client, clientAuth, params, requestOptions(auth.token_url, ctx, timeoutMs));
          return await oauth.processClientCredentialsResponse(as, client, res);
        } catch (err) {
          throw sourceUnreadable(sourceName, `token request to ${shownTokenUrl(auth.token_url)} failed: ${describeOAuthError(err)}`);
        }
      });
    }
    case 'google-service-account': {
      const key = ['gsa', auth.key_file, auth.subject, auth.scopes.join(' ')].join('\0');
      return tokenProvider(key, ctx, async () => {
        const sa = await readServiceAccount(sourceName, ctx.resolvePath(auth.key_file));
        const now = Math.floor(ctx.clock.now() / 1000);
        let assertion: string;
        try {
          const pk = await importPKCS8(sa.private_key, 'RS256');
          assertion = await new SignJWT({ scope: auth.scopes.join(' ') })
            .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) })
            .setIssuer(sa.client_email)
            .setSubject(auth.subject)
            .setAudience(sa.token_uri)
            .setIssuedAt(now)
            .setExpirationTime(now + 3600)
            .sign(pk);
        } catch (err) {
          throw sourceUnreadable(sourceName, `key_file ${auth.key_file}: cannot sign the assertion with its private_key: ${(err as Error).message}`);
        }
        const as: oauth.AuthorizationServer = { issuer: new URL(sa.token_uri).origin, token_endpoint: sa.token_uri };
        const client: oauth.Client = { client_id: sa.client_email };
        try {
          const res = await oauth.genericTokenEndpointRequest(as, client, oauth.None(), 'urn:ietf:params:oauth:grant-type:jwt-bearer', { assertion }, requestOptions(sa.token_uri, ctx, timeoutMs));
          return await oauth.processGenericTokenEndpointResponse(as, client, res);
        } catch (err) {
          throw sourceUnreadable(sourceName, `token request to ${shownTokenUrl(sa.token_uri)} failed: ${describeOAuthError(err)}`);
        }
      });
    }
  }
}

function requestOptions(tokenUrl: string, ctx: SourceReadContext, timeoutMs: number): { signal: AbortSignal; [oauth.allowInsecureRequests]?: boolean } {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
  // An http:// token URL is the operator's explicit choice (a loopback proxy, a test double): allowed as for `url`.
  return new URL(tokenUrl).protocol === 'http:' ? { signal, [oauth.allowInsecureRequests]: true } : { signal };
}

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

async function readServiceAccount(sourceName: string, path: string): Promise<ServiceAccountKey> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw sourceUnreadable(sourceName, `cannot read the service account key_file ${path}: ${code ?? 'not JSON'}`);
  }
  const k = raw as Partial<Record<keyof ServiceAccountKey, unknown>>;
  for (const f of ['client_email', 'private_key'] as const) {
    if (typeof k[f] !== 'string' || k[f] === '') throw sourceUnreadable(sourceName, `the service account key_file ${path} has no ${f}`);
  }
  registerSecrets([k.private_key as string]);
  return {
    client_email: k.client_email as string,
    private_key: k.private_key as string,
    ...(typeof k.private_key_id === 'string' ? { private_key_id: k.private_key_id } : {}),
    token_uri: typeof k.token_uri === 'string' && k.token_uri !== '' ? k.token_uri : 'https://oauth2.googleapis.com/token',
  };
}

function tokenProvider(key: string, ctx: SourceReadContext, fetchToken: () => Promise<oauth.TokenEndpointResponse>): AuthProvider {
  let pending: Promise<HeldToken> | undefined;
  const fresh = async (): Promise<HeldToken> => {
    const res = await fetchToken();
    // A token fetched at run time is a secret like the config's: replaced wherever it would appear.
    registerSecrets([res.access_token]);
    const t: HeldToken = { value: `${res.token_type.toLowerCase() === 'bearer' ? 'Bearer' : res.token_type} ${res.access_token}`, renewAt: undefined };
    // Its lifetime is a duration: measured on the monotonic clock, so a stepped wall clock neither keeps an expired
    // token nor drops a good one.
    if (typeof res.expires_in === 'number' && res.expires_in > 0) t.renewAt = monotonicNow(ctx.clock) + res.expires_in * 1000 - renewMargin(res.expires_in);
    held.set(key, t);
    return t;
  };
  return {
    refreshable: true,
    async authorization() {
      const t = held.get(key);
      if (t && (t.renewAt === undefined || monotonicNow(ctx.clock) < t.renewAt)) return t.value;
      // One token request at a time: parallel pages wait for the same one.
      pending ??= fresh().finally(() => {
        pending = undefined;
      });
      return (await pending).value;
    },
    invalidate() {
      held.delete(key);
    },
  };
}
