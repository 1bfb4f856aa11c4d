/**
 * Credential resolvers the auth area adds to the core: `st_` session tokens and application access JWTs.
 * Either answers 401 `invalid_session_token` when the token is unknown, forged, expired or revoked.
 */
import type { CredentialResolver, Principal } from '../core/types.js';
import { looksLikeJwt, verifyAccessToken } from './jwt.js';
import { appScopesOf, principalScopesOf } from './scopes.js';
import type { AuthState } from './state.js';
import { secretMatches, type SessionTokenRow } from './store.js';

const SESSION_TOKEN_FORMAT = /^st_([A-Za-z0-9]+)_([A-Za-z0-9]+)$/;

/** The stored row of a session token value, when the value is genuine (whatever its state). */
export function findSessionToken(state: AuthState, token: string): SessionTokenRow | undefined {
  const match = SESSION_TOKEN_FORMAT.exec(token);
  if (!match) return undefined;
  const row = state.store.sessionTokenByPrefix(match[1]!);
  return row && secretMatches(match[2]!, row.secret_hash) ? row : undefined;
}

/** Resolves `st_<prefix>_<secret>` session tokens. */
export function sessionTokenResolver(state: AuthState): CredentialResolver {
  return {
    matches: (token) => token.startsWith('st_'),
    resolve(token) {
      const row = findSessionToken(state, token);
      if (!row) return { error: 'invalid_session_token' };
      if (row.revoked || row.expires_at <= state.ctx.clock.now()) return { error: 'invalid_session_token' };
      if (state.clients.get(row.client_id)?.revoked !== false) return { error: 'invalid_session_token' };
      const capabilities = JSON.parse(row.capabilities) as string[];
      const principal: Principal = {
        kind: 'session_token',
        tenantId: row.tenant_id,
        scopes: principalScopesOf(capabilities),
        credentialId: `st:${row.id}`,
        grant: row.grant_type,
        clientId: row.client_id,
      };
      if (row.bound_agent_id !== null) principal.boundAgentId = row.bound_agent_id;
      if (row.bound_account_id !== null) principal.boundAccountId = row.bound_account_id;
      return principal;
    },
  };
}

/** Resolves application access JWTs (RS256, typ at+jwt, signed by a listed key, not expired). */
export function appTokenResolver(state: AuthState): CredentialResolver {
  return {
    matches: looksLikeJwt,
    resolve(token) {
      const claims = verifyAccessToken(token, state.keys, state.issuer(), state.ctx.clock.now());
      if (!claims || state.store.accessTokenRevoked(claims.jti)) return { error: 'invalid_session_token' };
      return {
        kind: 'app_token',
        tenantId: claims.tenant_id,
        scopes: appScopesOf(claims.scope),
        credentialId: `jwt:${claims.jti}`,
        clientId: claims.client_id,
        accountId: claims.sub,
      };
    },
  };
}
