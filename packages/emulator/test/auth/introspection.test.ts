/** POST /api/external/v1/auth/introspect: the result for login tokens, every kind of bad token, and its credential. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { appTokens, BOB_ACCOUNT, KEYS, sessionToken, startAuthEmulator, type AuthEmulator } from './support.js';

const INTROSPECT = '/api/external/v1/auth/introspect';

async function loginToken(emu: AuthEmulator, opts: { email?: string; ttl?: number; tenantId?: number } = {}): Promise<string> {
  const res = await emu.admin('POST', '/_emulator/login-tokens', {
    tenant_id: opts.tenantId ?? 1001,
    email: opts.email ?? 'bob@acme.test',
    ...(opts.ttl !== undefined ? { ttl_seconds: opts.ttl } : {}),
  });
  expect(res.status).toBe(200);
  expect(Object.keys(res.body)).toEqual(['token']);
  return res.body.token as string;
}

function introspect(emu: AuthEmulator, token: string, key: string = KEYS.acmeIntrospect) {
  return emu.json('POST', INTROSPECT, { token: key, body: { token } });
}

describe('introspection', () => {
  let emu: AuthEmulator;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
    emu = await startAuthEmulator({ clock });
  });
  afterAll(async () => {
    await emu.close();
  });

  it('describes a valid login token in an envelope', async () => {
    const token = await loginToken(emu, { ttl: 600 });
    const res = await introspect(emu, token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200, message: 'OK' });
    expect(typeof res.body.traceId).toBe('string');
    const d = res.body.data;
    const now = Math.floor(clock.now() / 1000);
    expect(d).toMatchObject({
      active: true,
      account_uuid: BOB_ACCOUNT,
      tenant_id: 1001,
      workspace_id: 1001,
      perms: ['tenant.member'],
      must_change_password: false,
      admin: false,
      kind: 'user',
      issuer: emu.url,
      subject: BOB_ACCOUNT,
      issued_at: now,
      expires_at: now + 600,
    });
    expect(Number.isInteger(d.account_id)).toBe(true);
    expect(typeof d.session_uuid).toBe('string');
    expect(typeof d.perms_hash).toBe('string');
    expect(typeof d.act_scope).toBe('string');
    expect(typeof d.acting_as).toBe('string');
    expect(d.cache_ttl_seconds).toBeGreaterThan(0);
    expect(d.cache_ttl_seconds).toBeLessThanOrEqual(600);
    // Stable numeric account id across tokens of the same account.
    const again = await introspect(emu, await loginToken(emu));
    expect(again.body.data.account_id).toBe(d.account_id);
  });

  it('marks an administrator', async () => {
    const res = await introspect(emu, await loginToken(emu, { email: 'ada@acme.test' }));
    expect(res.body.data).toMatchObject({ active: true, admin: true, perms: ['tenant.admin'] });
  });

  it('cache_ttl_seconds never goes beyond the remaining life, and the token is inactive once expired', async () => {
    const token = await loginToken(emu, { ttl: 30 });
    expect((await introspect(emu, token)).body.data.cache_ttl_seconds).toBe(30);
    await clock.advance(25_500);
    const near = (await introspect(emu, token)).body.data;
    expect(near.active).toBe(true);
    expect(near.cache_ttl_seconds).toBeLessThanOrEqual(4);
    expect(near.expires_at * 1000 - clock.now()).toBeGreaterThanOrEqual(near.cache_ttl_seconds * 1000);
    await clock.advance(4_500);
    const expired = await introspect(emu, token);
    expect(expired.status).toBe(200);
    expect(expired.body.data).toEqual({ active: false });
  });

  it('caps cache_ttl_seconds at the configured bound for long-lived tokens', async () => {
    const res = await introspect(emu, await loginToken(emu, { ttl: 7200 }));
    expect(res.body.data.cache_ttl_seconds).toBe(300);
  });

  it('a revoked token is inactive; revoking an unknown token is 404', async () => {
    const token = await loginToken(emu);
    const revoked = await emu.admin('POST', '/_emulator/login-tokens/revoke', { token });
    expect(revoked.status).toBe(200);
    expect((await introspect(emu, token)).body.data).toEqual({ active: false });
    expect((await emu.admin('POST', '/_emulator/login-tokens/revoke', { token: 'lt_unknown' })).status).toBe(404);
  });

  it('another tenant\'s token is inactive for this tenant (and active for its own)', async () => {
    const globexToken = await loginToken(emu, { tenantId: 2002, email: 'gina@globex.test' });
    expect((await introspect(emu, globexToken)).body.data).toEqual({ active: false });
    expect((await introspect(emu, globexToken, KEYS.globexIntrospect)).body.data.active).toBe(true);
  });

  it('garbage, session tokens and application tokens are not login tokens: inactive', async () => {
    const st = await sessionToken(emu);
    const app = (await appTokens(emu)).body;
    for (const token of ['garbage', 'lt_0000', st, app.access_token, app.id_token, app.refresh_token]) {
      const res = await introspect(emu, token);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ active: false });
    }
  });

  it('a token of a member who has left is inactive', async () => {
    const emu2 = await startAuthEmulator();
    try {
      const token = await loginToken(emu2);
      expect((await introspect(emu2, token)).body.data.active).toBe(true);
      const removed = await emu2.json('DELETE', `/api/external/v1/org/members/${BOB_ACCOUNT}`, { token: KEYS.acmeOrgRw });
      expect(removed.status).toBe(204);
      expect((await introspect(emu2, token)).body.data).toEqual({ active: false });
    } finally {
      await emu2.close();
    }
  });

  it('accepts a form body', async () => {
    const token = await loginToken(emu);
    const res = await fetch(`${emu.url}${INTROSPECT}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.acmeIntrospect}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { active: boolean } }).data.active).toBe(true);
  });

  it('needs an ek_ key with tenant.auth.introspect: 401 without, 403 with another scope or a session token', async () => {
    const token = await loginToken(emu);
    const none = await emu.json('POST', INTROSPECT, { body: { token } });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ success: false, code: 4010 });
    const wrongKey = await introspect(emu, token, KEYS.acmeOrgRw);
    expect(wrongKey.status).toBe(403);
    expect(wrongKey.body).toMatchObject({ success: false, code: 4030, error: { code: 'scope_denied' } });
    const st = await introspect(emu, token, await sessionToken(emu));
    expect(st.status).toBe(403);
    expect((await introspect(emu, token, 'ek_unknown_000')).status).toBe(401);
  });

  it('400 without a token or with properties it does not know', async () => {
    const missing = await emu.json('POST', INTROSPECT, { token: KEYS.acmeIntrospect, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ success: false, code: 4000, message: 'token: required' });
    const wrongType = await emu.json('POST', INTROSPECT, { token: KEYS.acmeIntrospect, body: { token: 42 } });
    expect(wrongType.status).toBe(400);
    const extra = await emu.json('POST', INTROSPECT, { token: KEYS.acmeIntrospect, body: { token: 'x', tenant_id: 1001 } });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toBe('unknown property: tenant_id');
  });

  it('the login-tokens admin route refuses unknown tenants and members', async () => {
    expect((await emu.admin('POST', '/_emulator/login-tokens', { tenant_id: 1001, email: 'nobody@acme.test' })).status).toBe(404);
    expect((await emu.admin('POST', '/_emulator/login-tokens', { tenant_id: 4242, email: 'bob@acme.test' })).status).toBe(404);
    expect((await emu.admin('POST', '/_emulator/login-tokens', { tenant_id: 1001, email: 'bob@acme.test', ttl_seconds: 0 })).status).toBe(400);
  });
});
