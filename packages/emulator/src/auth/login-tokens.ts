/**
 * User login access tokens (what the platform's own client holds after a user signs in) and their introspection.
 * The emulator makes them through an admin route; they are opaque (`lt_` + 64 hex digits) and stored hashed.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AuthState } from './state.js';
import { hashSecret } from './store.js';

/** Issues a login token for a member; returns the token value. */
export function issueLoginToken(state: AuthState, tenantId: number, accountId: string, ttlSeconds: number): string {
  const token = `lt_${randomBytes(32).toString('hex')}`;
  const now = state.ctx.clock.now();
  state.store.insertLoginToken({
    token_hash: hashSecret(token),
    session_uuid: randomUUID(),
    tenant_id: tenantId,
    account_id: accountId,
    issued_at: now,
    expires_at: now + ttlSeconds * 1000,
  });
  return token;
}

/** Revokes a login token; false when it is unknown. */
export function revokeLoginToken(state: AuthState, token: string): boolean {
  return state.store.revokeLoginToken(hashSecret(token));
}

/** The inactive answer: nothing else is said about a token that is not valid for the caller. */
const INACTIVE = { active: false } as const;

/**
 * The introspection result of `token` for a caller of `callerTenantId`. Unknown, expired, revoked, another tenant's,
 * or of an account that is no longer an active member: `{ active: false }`.
 */
export function introspect(state: AuthState, callerTenantId: number, token: string): Record<string, unknown> {
  const row = state.store.loginTokenByHash(hashSecret(token));
  const now = state.ctx.clock.now();
  if (!row || row.revoked || row.expires_at <= now || row.tenant_id !== callerTenantId) return INACTIVE;
  const member = state.ctx.directory.memberByAccountId(row.tenant_id, row.account_id);
  if (!member || member.status === 'left' || member.status === 'suspended') return INACTIVE;
  const remainingSeconds = Math.floor((row.expires_at - now) / 1000);
  const perms = [...member.roles].sort();
  return {
    active: true,
    account_id: state.store.accountNumber(member.account_id),
    account_uuid: member.account_id,
    tenant_id: row.tenant_id,
    // One workspace per tenant in the emulator; its id is the tenant id.
    workspace_id: row.tenant_id,
    act_scope: 'tenant',
    session_uuid: row.session_uuid,
    perms,
    perms_hash: createHash('sha256').update(perms.join('\n')).digest('hex').slice(0, 16),
    must_change_password: false,
    admin: member.roles.includes('tenant.admin'),
    acting_as: '',
    kind: 'user',
    issuer: state.issuer(),
    subject: member.account_id,
    issued_at: Math.floor(row.issued_at / 1000),
    expires_at: Math.floor(row.expires_at / 1000),
    cache_ttl_seconds: Math.max(0, Math.min(state.settings.introspection_cache_ttl_seconds, remainingSeconds)),
  };
}
