/**
 * POST /api/external/v1/oauth/token: the four grants. The request is selected by grant_type and each grant accepts
 * exactly the spec's fields (unknown properties are 400). Client authentication accepts the body fields
 * (client_secret_post) or an HTTP Basic header (client_secret_basic), as the discovery document announces.
 *
 * Order of checks: the per-client_id rate limit, then the shape of the request (400), then client authentication
 * (one uniform 401), then the grant (400 with `invalid_grant` in the message for a bad code or refresh token).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ApiError, badRequest } from '../core/errors.js';
import type { OAuthClient } from './clients.js';
import { signAccessToken, signIdToken, type IdTokenProfile } from './jwt.js';
import { tenantScopesOf } from './scopes.js';
import type { AuthState } from './state.js';
import { hashSecret } from './store.js';

/** The grant types of the spec, in the order the discovery document lists them. */
export const GRANT_TYPES = ['client_credentials', 'runtime_access', 'authorization_code', 'refresh_token'] as const;

/** A successful answer (the token response, without envelope). */
export interface TokenResponse { status: 200; body: Record<string, unknown> }

const nonEmpty = z.string().min(1);
/** Form bodies carry strings; JSON bodies numbers. Both are accepted for integer fields. */
const intLike = z.union([z.number().int(), z.string().regex(/^-?\d+$/).transform(Number)], { error: 'must be an integer' });
/** An array, or in a form body repeated keys or one space- or comma-separated value. */
const stringList = z.union([
  z.array(z.string()),
  z.string().transform((s) => s.split(/[\s,]+/).filter(Boolean)),
], { error: 'must be an array of capability names' });

const clientAuth = { client_id: nonEmpty, client_secret: nonEmpty };
const sessionOptions = { capability_bindings: stringList.optional(), ttl_seconds: intLike.optional() };

const grantSchemas = {
  client_credentials: z.strictObject({ grant_type: z.literal('client_credentials'), ...clientAuth, ...sessionOptions }),
  runtime_access: z.strictObject({
    grant_type: z.literal('runtime_access'),
    ...clientAuth,
    tenant_id: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)], { error: 'must be an integer tenant id (number or string)' }),
    ...sessionOptions,
    agent_id: nonEmpty.optional(),
    account_id: nonEmpty.optional(),
  }),
  authorization_code: z.strictObject({ grant_type: z.literal('authorization_code'), code: nonEmpty, ...clientAuth, redirect_uri: nonEmpty }),
  refresh_token: z.strictObject({ grant_type: z.literal('refresh_token'), refresh_token: nonEmpty, ...clientAuth }),
};

type GrantRequest<G extends keyof typeof grantSchemas> = z.infer<(typeof grantSchemas)[G]>;

/** One line naming the first problem of a request (unknown properties first). */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input?: unknown): string {
  const sorted = [...issues].sort((a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'));
  const issue = sorted[0];
  if (!issue) return 'invalid request';
  if (issue.code === 'unrecognized_keys') return `unknown property: ${issue.keys.join(', ')}`;
  const field = issue.path.map(String).join('.') || 'body';
  const top = issue.path.length === 1 && input !== null && typeof input === 'object' ? (input as Record<PropertyKey, unknown>)[issue.path[0]!] : 0;
  if (top === undefined || (issue.code === 'invalid_type' && /received undefined/.test(issue.message))) return `${field}: required`;
  return `${field}: ${issue.message}`;
}

const invalidGrant = (why: string) => new ApiError(400, 'invalid_grant', `invalid_grant: ${why}`);
/** The one answer for every client authentication failure. */
const clientAuthFailed = () => new ApiError(401, 'invalid_client_credentials', 'client authentication failed');

/** Client credentials from an `Authorization: Basic` header (RFC 6749 2.3.1: each part form-urlencoded). */
function basicCredentials(header: string | undefined): { client_id: string; client_secret: string } | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw badRequest('authorization: a Basic header holds client_id:client_secret');
  const unescape = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  try {
    return { client_id: unescape(decoded.slice(0, colon)), client_secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    throw badRequest('authorization: malformed Basic credentials');
  }
}

/** Merges body fields and Basic credentials into one request object; a form's `capability_bindings[]` is the list. */
function requestFields(body: unknown, authorization: string | undefined): Record<string, unknown> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('body: expected form fields or a JSON object');
  }
  const fields: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  if ('capability_bindings[]' in fields && !('capability_bindings' in fields)) {
    const list = fields['capability_bindings[]'];
    delete fields['capability_bindings[]'];
    fields.capability_bindings = Array.isArray(list) ? list : [list];
  }
  const basic = basicCredentials(authorization);
  if (basic) {
    if (fields.client_secret !== undefined) throw badRequest('client_secret: use either the Basic header or the body, not both');
    if (fields.client_id !== undefined && fields.client_id !== basic.client_id) throw badRequest('client_id: differs from the Basic header');
    fields.client_id = basic.client_id;
    fields.client_secret = basic.client_secret;
  }
  return fields;
}

/** Handles one token request; throws ApiError for every error answer. */
export async function handleTokenRequest(state: AuthState, body: unknown, authorization: string | undefined): Promise<TokenResponse> {
  const fields = requestFields(body, authorization);

  if (typeof fields.client_id === 'string' && fields.client_id !== '') {
    const retryAfter = state.takeClientRequest(fields.client_id);
    if (retryAfter > 0) {
      throw new ApiError(429, 'rate_limited', `too many token requests for client_id ${fields.client_id}`, { 'Retry-After': String(retryAfter) });
    }
  }

  const grantType = fields.grant_type;
  if (grantType === undefined || grantType === '') throw badRequest('grant_type: required');
  if (typeof grantType !== 'string' || !(GRANT_TYPES as readonly string[]).includes(grantType)) {
    throw badRequest(`grant_type: unsupported_grant_type (use one of ${GRANT_TYPES.join(', ')})`);
  }
  const grant = grantType as keyof typeof grantSchemas;
  const parsed = grantSchemas[grant].safeParse(fields);
  if (!parsed.success) throw badRequest(describeIssues(parsed.error.issues, fields));
  const req = parsed.data;

  const client = state.clients.authenticate(req.client_id, req.client_secret);
  if (!client) throw clientAuthFailed();

  switch (req.grant_type) {
    case 'client_credentials':
      return issueSessionToken(state, client, req, client.tenantId);
    case 'runtime_access':
      // A client exists in one tenant only: naming another tenant is a failed client authentication.
      if (req.tenant_id !== client.tenantId) throw clientAuthFailed();
      return issueSessionToken(state, client, req, req.tenant_id);
    case 'authorization_code':
      return exchangeCode(state, client, req);
    case 'refresh_token':
      return exchangeRefreshToken(state, client, req);
  }
}

function requireKind(client: OAuthClient, kind: OAuthClient['kind'], grant: string): void {
  if (client.kind !== kind) {
    throw new ApiError(400, 'unauthorized_client', `unauthorized_client: grant_type ${grant} is not allowed for a ${client.kind} client`);
  }
}

/** Random token material of letters and digits only (the st_ format allows nothing else). */
function randomAlnum(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function issueSessionToken(
  state: AuthState,
  client: OAuthClient,
  req: GrantRequest<'client_credentials'> | GrantRequest<'runtime_access'>,
  tenantId: number,
): TokenResponse {
  requireKind(client, 'runtime', req.grant_type);
  let capabilities = client.capabilities;
  if (req.capability_bindings !== undefined) {
    const outside = req.capability_bindings.filter((c) => !client.capabilities.includes(c));
    if (outside.length > 0) {
      throw badRequest(`capability_bindings: ${outside.join(', ')} not held by client ${client.clientId} (bindings may only narrow its capabilities)`);
    }
    capabilities = [...new Set(req.capability_bindings)];
  }
  const ttl = req.ttl_seconds ?? 3600;
  const maxTtl = state.settings.max_session_ttl_seconds;
  if (ttl < 1 || ttl > maxTtl) throw badRequest(`ttl_seconds: must be between 1 and ${maxTtl}`);

  let boundAgentId: string | undefined;
  let boundAccountId: string | undefined;
  if (req.grant_type === 'runtime_access') {
    if (req.agent_id !== undefined) {
      const agent = state.ctx.agents.byId(tenantId, req.agent_id);
      if (!agent || agent.status !== 'active') throw badRequest(`agent_id: no active digital employee ${req.agent_id} in tenant ${tenantId}`);
      boundAgentId = agent.id;
    }
    if (req.account_id !== undefined) {
      const member = state.ctx.directory.memberByAccountId(tenantId, req.account_id);
      if (!member || member.status === 'left') throw badRequest(`account_id: no member ${req.account_id} in tenant ${tenantId}`);
      boundAccountId = member.account_id;
    }
  }

  const now = state.ctx.clock.now();
  const id = randomUUID();
  const prefix = randomAlnum(6);
  const secret = randomAlnum(24);
  state.store.insertSessionToken({
    id,
    prefix,
    secret_hash: hashSecret(secret),
    tenant_id: tenantId,
    client_id: client.clientId,
    grant_type: req.grant_type,
    capabilities: JSON.stringify(capabilities),
    bound_agent_id: boundAgentId ?? null,
    bound_account_id: boundAccountId ?? null,
    issued_at: now,
    expires_at: now + ttl * 1000,
  });
  const body: Record<string, unknown> = {
    access_token: `st_${prefix}_${secret}`,
    token_type: 'Bearer',
    expires_in: ttl,
    scope: tenantScopesOf(capabilities).join(' '),
    session_token_id: id,
    bound_tenant_id: tenantId,
    bound_runtime_environment_id: client.runtimeEnvironmentId,
  };
  if (boundAgentId !== undefined) body.bound_agent_id = boundAgentId;
  if (boundAccountId !== undefined) body.bound_account_id = boundAccountId;
  return { status: 200, body };
}

async function exchangeCode(state: AuthState, client: OAuthClient, req: GrantRequest<'authorization_code'>): Promise<TokenResponse> {
  requireKind(client, 'h5_app', req.grant_type);
  const hash = hashSecret(req.code);
  const row = state.store.codeByHash(hash);
  if (!row || row.used || row.client_id !== client.clientId || row.expires_at <= state.ctx.clock.now()) {
    throw invalidGrant('the authorization code is invalid, expired or already used');
  }
  if (req.redirect_uri !== row.redirect_uri || !client.redirectUris.includes(req.redirect_uri)) {
    throw invalidGrant('redirect_uri does not match the registered redirect URI exactly');
  }
  if (!state.store.consumeCode(hash)) throw invalidGrant('the authorization code is invalid, expired or already used');
  return issueAppTokens(state, client, { tenantId: row.tenant_id, accountId: row.account_id, scope: row.scope, nonce: row.nonce ?? undefined });
}

async function exchangeRefreshToken(state: AuthState, client: OAuthClient, req: GrantRequest<'refresh_token'>): Promise<TokenResponse> {
  requireKind(client, 'h5_app', req.grant_type);
  const hash = hashSecret(req.refresh_token);
  const row = state.store.refreshTokenByHash(hash);
  if (!row || row.used || row.client_id !== client.clientId || row.expires_at <= state.ctx.clock.now()) {
    throw invalidGrant('the refresh token is invalid, expired or already used');
  }
  // Rotation: the presented value is dead from this moment, whatever happens next.
  if (!state.store.consumeRefreshToken(hash)) throw invalidGrant('the refresh token is invalid, expired or already used');
  return issueAppTokens(state, client, { tenantId: row.tenant_id, accountId: row.account_id, scope: row.scope, nonce: undefined });
}

/** Access JWT + ID token + a new refresh token for a member of the client's tenant. */
async function issueAppTokens(
  state: AuthState,
  client: OAuthClient,
  grant: { tenantId: number; accountId: string; scope: string; nonce: string | undefined },
): Promise<TokenResponse> {
  const member = state.ctx.directory.memberByAccountId(grant.tenantId, grant.accountId);
  if (!member || member.status === 'left' || member.status === 'suspended') {
    throw invalidGrant('the account is no longer an active member of the tenant');
  }
  const { settings } = state;
  const nowMs = state.ctx.clock.now();
  const iat = Math.floor(nowMs / 1000);
  const issuer = state.issuer();
  const tenant = state.ctx.seed.tenants.find((t) => t.id === grant.tenantId);
  const profile: IdTokenProfile = {
    sub: member.account_id,
    email: member.email,
    email_verified: member.email !== '',
    name: member.display_name,
    phone_number: member.phone,
    tenant: { id: grant.tenantId, name: tenant?.name ?? '' },
    membership: { status: member.status, roles: member.roles },
    svc_context: { client_id: client.clientId, client_kind: client.kind, environment: 'emulator' },
  };
  const accessToken = await signAccessToken(state.keys, {
    iss: issuer,
    sub: member.account_id,
    aud: client.clientId,
    client_id: client.clientId,
    scope: grant.scope,
    tenant_id: grant.tenantId,
    iat,
    exp: iat + settings.access_token_ttl_seconds,
  });
  const idToken = await signIdToken(state.keys, {
    issuer,
    audience: client.clientId,
    iat,
    exp: iat + settings.id_token_ttl_seconds,
    nonce: grant.nonce,
    profile,
  });
  const refreshToken = randomBytes(32).toString('base64url');
  state.store.insertRefreshToken({
    token_hash: hashSecret(refreshToken),
    tenant_id: grant.tenantId,
    client_id: client.clientId,
    account_id: member.account_id,
    scope: grant.scope,
    expires_at: nowMs + settings.refresh_token_ttl_seconds * 1000,
  });
  return {
    status: 200,
    body: {
      access_token: accessToken,
      id_token: idToken,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: settings.access_token_ttl_seconds,
      scope: grant.scope,
    },
  };
}
