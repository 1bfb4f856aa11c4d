/**
 * Credentials: ek_ API keys (stored as sha256 hashes, compared in constant time), the resolver registry other areas
 * extend (auth adds st_ and JWT), and `authorize(routeAuth)`, the hook that turns a bearer token into a Principal,
 * applies the rate limits and checks the route's scope.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import type { CredentialResolver, Principal, RateLimiter, RouteAuth } from './types.js';
import type { Seed } from './seed.js';

const API_KEY_FORMAT = /^ek_([A-Za-z0-9]+)_([A-Za-z0-9]+)$/;

/** sha256 of a secret, as stored. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The ek_ key table (core-owned: every area's API keys live here). */
export function migrateApiKeys(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS emu_api_keys (
    id TEXT PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    prefix TEXT NOT NULL,
    key_hash BLOB NOT NULL UNIQUE,
    scopes TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS emu_api_keys_prefix ON emu_api_keys(prefix);`);
}

/**
 * Stores the seed's API keys. The seed is the truth for keys: on a restart over a --db file, a key no longer in the
 * seed stops working and a changed key gets the seed's tenant and scopes.
 */
export function seedApiKeys(db: Database.Database, seed: Seed): void {
  const upsert = db.prepare(`INSERT INTO emu_api_keys (id, tenant_id, prefix, key_hash, scopes) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT(key_hash) DO UPDATE SET tenant_id = excluded.tenant_id, scopes = excluded.scopes`);
  db.transaction(() => {
    db.prepare('DELETE FROM emu_api_keys').run();
    for (const tenant of seed.tenants) {
      for (const apiKey of tenant.api_keys) {
        const prefix = API_KEY_FORMAT.exec(apiKey.key)?.[1] ?? '';
        upsert.run(randomUUID(), tenant.id, prefix, hashSecret(apiKey.key), JSON.stringify(apiKey.scopes));
      }
    }
  })();
}

/** Resolves ek_ keys against emu_api_keys. */
export function apiKeyResolver(db: Database.Database): CredentialResolver {
  const byPrefix = db.prepare<[string], { id: string; tenant_id: number; key_hash: Buffer; scopes: string }>(
    'SELECT id, tenant_id, key_hash, scopes FROM emu_api_keys WHERE prefix = ?',
  );
  // Parsed scope sets per key row (the seed's keys do not change while running).
  const scopeSets = new Map<string, ReadonlySet<string>>();
  const scopesOf = (id: string, json: string): ReadonlySet<string> => {
    let set = scopeSets.get(id + json);
    if (!set) {
      set = new Set(JSON.parse(json) as string[]);
      scopeSets.set(id + json, set);
    }
    return set;
  };
  return {
    matches: (token) => token.startsWith('ek_'),
    resolve(token) {
      const prefix = API_KEY_FORMAT.exec(token)?.[1];
      if (prefix === undefined) return { error: 'invalid_api_key' };
      const presented = hashSecret(token);
      let found: Principal | undefined;
      // Compare against every candidate of the prefix, in constant time each, without stopping early.
      for (const row of byPrefix.all(prefix)) {
        if (row.key_hash.length === presented.length && timingSafeEqual(row.key_hash, presented)) {
          found = { kind: 'api_key', tenantId: row.tenant_id, scopes: scopesOf(row.id, row.scopes), credentialId: `ek:${row.id}` };
        }
      }
      return found ?? { error: 'invalid_api_key' };
    },
  };
}

/** The resolver registry: the first resolver that matches a token's shape resolves it. */
export class CredentialRegistry {
  private readonly resolvers: CredentialResolver[] = [];

  add(resolver: CredentialResolver): void {
    this.resolvers.push(resolver);
  }

  resolve(token: string): ReturnType<CredentialResolver['resolve']> | undefined {
    const resolver = this.resolvers.find((r) => r.matches(token));
    return resolver?.resolve(token);
  }
}

/** The bearer token of a request, or undefined. */
export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** How a 429's message names a credential's own limit, by principal kind. */
const LIMIT_NAMES = { api_key: 'api key', session_token: 'session token', app_token: 'tenant' } as const;

const KIND_FIELD = { api_key: 'apiKey', session_token: 'sessionToken', app_token: 'appToken' } as const;

/** Builds the `authorize(routeAuth)` hook factory of a context. */
export function makeAuthorize(
  registry: CredentialRegistry,
  limiter: RateLimiter,
  limits: () => Seed['limits'],
): (auth: RouteAuth) => (req: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return (auth) => async (req) => {
    req.errorShape = auth.shape;
    const token = bearerToken(req);
    if (token === undefined) throw new ApiError(401, 'invalid_api_key', 'missing credential: send Authorization: Bearer <token>');
    const resolved = registry.resolve(token);
    if (resolved === undefined) throw new ApiError(401, 'invalid_api_key', 'unknown credential');
    if ('error' in resolved) throw new ApiError(401, resolved.error, 'invalid or expired credential');
    const principal = resolved;
    req.principal = principal;

    const l = limits();
    const tenantBucket = `tenant:${principal.tenantId}`;
    const buckets = [{ key: tenantBucket, ratePerSecond: l.per_tenant }];
    if (principal.kind === 'api_key') buckets.push({ key: `cred:${principal.credentialId}`, ratePerSecond: l.per_api_key });
    if (principal.kind === 'session_token') buckets.push({ key: `cred:${principal.credentialId}`, ratePerSecond: l.per_session_token });
    const { retryAfterSeconds, refused } = limiter.takeOrRefuse(buckets);
    if (retryAfterSeconds > 0) {
      // The message names the limit hit, the tenant's first (docs/decisions.md, "Which limit a 429 names"): a client
      // with several keys pauses all of them on the tenant's, only the one key on its own.
      const which = refused.includes(tenantBucket) ? 'tenant' : LIMIT_NAMES[principal.kind];
      throw new ApiError(429, 'rate_limited', `rate limit exceeded: ${which}`, { 'retry-after': String(retryAfterSeconds) });
    }

    const required = auth[KIND_FIELD[principal.kind]];
    if (required === undefined) throw new ApiError(403, 'scope_denied', 'this kind of credential is not accepted here');
    const anyOf = Array.isArray(required) ? required : [required];
    if (!anyOf.some((scope) => principal.scopes.has(scope))) {
      throw new ApiError(403, 'scope_denied', `the credential lacks the scope ${anyOf.join(' or ')}`);
    }
    if (auth.sessionGrant && principal.kind === 'session_token' && principal.grant !== auth.sessionGrant) {
      throw new ApiError(403, 'scope_denied', `only a ${auth.sessionGrant} session token is accepted here`);
    }
  };
}
