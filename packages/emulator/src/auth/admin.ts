/**
 * The auth area's `/_emulator` admin routes (registered only with an admin token; the core checks it). They stand in
 * for what the platform's own client and operators do: sign a user in (authorization codes, login tokens), revoke
 * tokens, rotate and remove signing keys, and make the key set unavailable.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError, badRequest, notFound } from '../core/errors.js';
import type { DirectoryMember } from '../core/types.js';
import type { OAuthClient } from './clients.js';
import { findSessionToken } from './credentials.js';
import { verifyAccessToken } from './jwt.js';
import { JWKS_UNAVAILABLE_SWITCH } from './discovery.js';
import { issueLoginToken, revokeLoginToken } from './login-tokens.js';
import { SUPPORTED_SCOPES } from './scopes.js';
import type { AuthState } from './state.js';
import { hashSecret } from './store.js';
import { describeIssues } from './token-endpoint.js';

const tenantId = z.union([z.number().int().positive(), z.string().regex(/^\d+$/).transform(Number)]);

/** POST /_emulator/authorization-codes */
export const authorizationCodeRequestSchema = z.object({
  tenant_id: tenantId,
  client_id: z.string().min(1),
  email: z.string().min(1),
  /** Default: the client's only registered redirect URI. */
  redirect_uri: z.string().min(1).optional(),
  nonce: z.string().min(1).optional(),
  /** Space-separated; default `openid`. */
  scope: z.string().optional(),
});

/** POST /_emulator/login-tokens */
export const loginTokenRequestSchema = z.object({
  tenant_id: tenantId,
  email: z.string().min(1),
  ttl_seconds: z.number().int().positive().optional(),
});

const tokenBodySchema = z.object({ token: z.string().min(1) });

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw badRequest(describeIssues(parsed.error.issues, body ?? {}));
  return parsed.data;
}

function tenantOf(state: AuthState, id: number): void {
  if (!state.ctx.seed.tenants.some((t) => t.id === id)) throw notFound(`tenant ${id} is not in the seed`);
}

function memberOf(state: AuthState, tenant: number, email: string): DirectoryMember {
  const member = state.ctx.directory.memberByEmail(tenant, email);
  if (!member || member.status === 'left') throw notFound(`no member with e-mail ${email} in tenant ${tenant}`);
  return member;
}

/** The scope of a new code: known values only; API scopes the client does not hold are left out. */
function grantedScope(client: OAuthClient, requested: string | undefined): string {
  const values = (requested ?? 'openid').split(' ').filter(Boolean);
  const unknown = values.filter((v) => !(SUPPORTED_SCOPES as readonly string[]).includes(v));
  if (unknown.length > 0) throw badRequest(`scope: unsupported value ${unknown.join(', ')} (supported: ${SUPPORTED_SCOPES.join(' ')})`);
  const openIdScopes = ['openid', 'email', 'profile'];
  return [...new Set(values.filter((v) => openIdScopes.includes(v) || client.capabilities.includes(v)))].join(' ');
}

/** Revokes whatever issued token `token` is; the kind revoked, or undefined when it is none of ours. */
export function revokeToken(state: AuthState, token: string): 'login_token' | 'session_token' | 'refresh_token' | 'access_token' | undefined {
  if (revokeLoginToken(state, token)) return 'login_token';
  const session = findSessionToken(state, token);
  if (session) {
    state.store.revokeSessionToken(session.id);
    return 'session_token';
  }
  const refreshHash = hashSecret(token);
  if (state.store.refreshTokenByHash(refreshHash)) {
    state.store.consumeRefreshToken(refreshHash);
    return 'refresh_token';
  }
  const claims = verifyAccessToken(token, state.keys, state.issuer(), state.ctx.clock.now());
  if (claims) {
    state.store.revokeAccessToken(claims.jti, claims.exp * 1000);
    return 'access_token';
  }
  return undefined;
}

/** Registers the admin routes. */
export function registerAuthAdminRoutes(admin: FastifyInstance, state: AuthState): void {
  admin.post('/_emulator/authorization-codes', async (req) => {
    const body = parse(authorizationCodeRequestSchema, req.body);
    tenantOf(state, body.tenant_id);
    const client = state.clients.get(body.client_id);
    if (!client || client.tenantId !== body.tenant_id) throw notFound(`no OAuth client ${body.client_id} in tenant ${body.tenant_id}`);
    if (client.kind !== 'h5_app') throw badRequest(`client_id: ${body.client_id} is a ${client.kind} client; authorization codes are for h5_app clients`);
    const member = memberOf(state, body.tenant_id, body.email);
    let redirectUri = body.redirect_uri;
    if (redirectUri === undefined) {
      if (client.redirectUris.length !== 1) throw badRequest('redirect_uri: required (the client has no single registered redirect URI)');
      redirectUri = client.redirectUris[0]!;
    }
    const code = randomBytes(32).toString('base64url');
    state.store.insertCode({
      code_hash: hashSecret(code),
      tenant_id: body.tenant_id,
      client_id: client.clientId,
      account_id: member.account_id,
      redirect_uri: redirectUri,
      nonce: body.nonce ?? null,
      scope: grantedScope(client, body.scope),
      expires_at: state.ctx.clock.now() + state.settings.authorization_code_ttl_seconds * 1000,
      used: 0,
    });
    return { code };
  });

  admin.post('/_emulator/login-tokens', async (req) => {
    const body = parse(loginTokenRequestSchema, req.body);
    tenantOf(state, body.tenant_id);
    const member = memberOf(state, body.tenant_id, body.email);
    const ttl = body.ttl_seconds ?? state.settings.login_token_ttl_seconds;
    return { token: issueLoginToken(state, body.tenant_id, member.account_id, ttl) };
  });

  // One revocation route for every token the emulator issues (the issue names it for login tokens); the
  // session-tokens alias reads better in tests of st_ tokens.
  for (const path of ['/_emulator/login-tokens/revoke', '/_emulator/session-tokens/revoke']) {
    admin.post(path, async (req) => {
      const body = parse(tokenBodySchema, req.body);
      const kind = revokeToken(state, body.token);
      if (!kind) throw notFound('unknown token');
      return { revoked: true, kind };
    });
  }

  const keyList = () => ({ keys: state.keys.all().map((k) => ({ kid: k.kid, status: k.status })) });

  admin.get('/_emulator/keys', async () => {
    await state.keys.ensure();
    return keyList();
  });

  admin.post('/_emulator/keys/rotate', async () => {
    await state.keys.rotate();
    return keyList();
  });

  admin.delete<{ Params: { kid: string } }>('/_emulator/keys/:kid', async (req) => {
    await state.keys.ensure();
    const result = state.keys.remove(req.params.kid);
    if (result === 'not_found') throw notFound(`no key ${req.params.kid} in the key set`);
    if (result === 'active') throw new ApiError(409, 'key_is_active', 'the active signing key cannot be removed; rotate first');
    return keyList();
  });

  admin.put('/_emulator/jwks/unavailable', async (_req, reply) => {
    state.ctx.switches.set(JWKS_UNAVAILABLE_SWITCH, true);
    return reply.code(204).send();
  });

  admin.delete('/_emulator/jwks/unavailable', async (_req, reply) => {
    state.ctx.switches.delete(JWKS_UNAVAILABLE_SWITCH);
    return reply.code(204).send();
  });
}
