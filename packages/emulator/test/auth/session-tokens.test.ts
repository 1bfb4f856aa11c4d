/**
 * The token endpoint's session-token grants (client_credentials, runtime_access), request validation, the uniform
 * 401, the per-client_id limit, and the expiry and revocation of st_ tokens (ManualClock, no sleeps).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { AGENT_ID, authTestSeed, BOB_ACCOUNT, CLIENTS, DELETED_AGENT_ID, GLOBEX_AGENT_ID, KEYS, sessionToken, startAuthEmulator, TOKEN, type AuthEmulator } from './support.js';

const rt = CLIENTS.runtime;
const DEPARTMENTS = '/api/external/v1/org/departments';

describe('client_credentials and runtime_access', () => {
  let emu: AuthEmulator;
  beforeAll(async () => {
    emu = await startAuthEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('client_credentials (form body) issues an st_ token with the default lifetime and the client capabilities as scopes', async () => {
    const res = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const b = res.body;
    expect(b.access_token).toMatch(/^st_[A-Za-z0-9]+_[A-Za-z0-9]+$/);
    expect(b).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'tenant.org.read tenant.kb.read tenant.memory.read', bound_tenant_id: 1001 });
    expect(b.session_token_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(b.bound_runtime_environment_id)).toBe(true);
    expect(b).not.toHaveProperty('bound_agent_id');
    expect(b).not.toHaveProperty('bound_account_id');
    expect(b).not.toHaveProperty('success');
  });

  it('accepts a JSON body and ttl_seconds', async () => {
    const res = await emu.json('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, ttl_seconds: 600 } });
    expect(res.status).toBe(200);
    expect(res.body.expires_in).toBe(600);
    const form = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, ttl_seconds: '120' });
    expect(form.body.expires_in).toBe(120);
  });

  it('rejects a ttl_seconds that is not a positive integer', async () => {
    for (const ttl of [0, -5, 1.5, 'soon']) {
      const res = await emu.json('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, ttl_seconds: ttl } });
      expect(res.status, String(ttl)).toBe(400);
      expect(res.body.message).toContain('ttl_seconds');
    }
  });

  it('capability_bindings narrow the token (JSON array, repeated form keys, one space-separated form value)', async () => {
    const json = await emu.json('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, capability_bindings: ['kb.read'] } });
    expect(json.status).toBe(200);
    expect(json.body.scope).toBe('tenant.kb.read');
    const repeated = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, capability_bindings: ['kb.read', 'memory.read'] });
    expect(repeated.body.scope).toBe('tenant.kb.read tenant.memory.read');
    const spaced = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, capability_bindings: 'org.read memory.read' });
    expect(spaced.body.scope).toBe('tenant.org.read tenant.memory.read');
  });

  it('capability_bindings cannot widen the client capabilities', async () => {
    const res = await emu.json('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret, capability_bindings: ['kb.read', 'kb.write'] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 4000, error: 'invalid_request' });
    expect(res.body.message).toContain('kb.write');
  });

  it('a narrowed token reads only what its bindings allow (org.read dropped: organisation read is 403)', async () => {
    const narrowed = await sessionToken(emu, rt, { capability_bindings: 'kb.read' });
    const res = await emu.json('GET', DEPARTMENTS, { token: narrowed });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_denied');
    const full = await sessionToken(emu, rt);
    expect((await emu.json('GET', DEPARTMENTS, { token: full })).status).toBe(200);
  });

  it('runtime_access binds the tenant, the agent and the account when requested and valid', async () => {
    const res = await emu.json('POST', TOKEN, {
      body: { grant_type: 'runtime_access', client_id: rt.id, client_secret: rt.secret, tenant_id: '1001', agent_id: AGENT_ID, account_id: BOB_ACCOUNT },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, bound_tenant_id: 1001, bound_agent_id: AGENT_ID, bound_account_id: BOB_ACCOUNT });
    expect(res.body.access_token).toMatch(/^st_/);
    expect(typeof res.body.bound_runtime_environment_id).toBe('number');
  });

  it('runtime_access accepts tenant_id as an integer and without agent or account binds neither', async () => {
    const res = await emu.form(TOKEN, { grant_type: 'runtime_access', client_id: rt.id, client_secret: rt.secret, tenant_id: '1001', ttl_seconds: '60', capability_bindings: 'kb.read' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expires_in: 60, scope: 'tenant.kb.read', bound_tenant_id: 1001 });
    expect(res.body).not.toHaveProperty('bound_agent_id');
    const json = await emu.json('POST', TOKEN, { body: { grant_type: 'runtime_access', client_id: rt.id, client_secret: rt.secret, tenant_id: 1001 } });
    expect(json.status).toBe(200);
  });

  it('runtime_access refuses an unknown, deleted or foreign agent and an unknown account with 400', async () => {
    for (const extra of [{ agent_id: '6f1c1b7e-0000-4000-8000-0000000000ff' }, { agent_id: DELETED_AGENT_ID }, { agent_id: GLOBEX_AGENT_ID }, { account_id: 'no-such-account' }]) {
      const res = await emu.json('POST', TOKEN, { body: { grant_type: 'runtime_access', client_id: rt.id, client_secret: rt.secret, tenant_id: 1001, ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.message).toContain(Object.keys(extra)[0]!);
    }
  });

  it('runtime_access naming another tenant is a client authentication failure', async () => {
    const res = await emu.json('POST', TOKEN, { body: { grant_type: 'runtime_access', client_id: rt.id, client_secret: rt.secret, tenant_id: 2002 } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(4010);
  });

  it('accepts client_secret_basic', async () => {
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(rt.id)}:${encodeURIComponent(rt.secret)}`).toString('base64')}`;
    const res = await emu.form(TOKEN, { grant_type: 'client_credentials' }, { authorization: basic });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toMatch(/^st_/);
    const wrong = `Basic ${Buffer.from(`${rt.id}:nope`).toString('base64')}`;
    expect((await emu.form(TOKEN, { grant_type: 'client_credentials' }, { authorization: wrong })).status).toBe(401);
  });
});

describe('request validation', () => {
  let emu: AuthEmulator;
  beforeAll(async () => {
    emu = await startAuthEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  const complete: Record<string, Record<string, string>> = {
    client_credentials: { grant_type: 'client_credentials', client_id: rt.id, client_secret: rt.secret },
    runtime_access: { grant_type: 'runtime_access', client_id: rt.id, client_secret: rt.secret, tenant_id: '1001' },
    authorization_code: { grant_type: 'authorization_code', code: 'some-code', client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret, redirect_uri: 'https://app.acme.test/callback' },
    refresh_token: { grant_type: 'refresh_token', refresh_token: 'some-refresh-token', client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret },
  };

  for (const [grant, fields] of Object.entries(complete)) {
    for (const field of Object.keys(fields).filter((f) => f !== 'grant_type')) {
      it(`${grant} without ${field} is 400 naming the field (shape 1)`, async () => {
        const { [field]: _dropped, ...rest } = fields;
        const res = await emu.form(TOKEN, rest);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ success: false, code: 4000, error: 'invalid_request' });
        expect(res.body.message).toBe(`${field}: required`);
        expect(typeof res.body.traceId).toBe('string');
      });
    }
    it(`${grant} with an unknown property is 400`, async () => {
      const res = await emu.form(TOKEN, { ...fields, colour: 'blue' });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('unknown property: colour');
    });
  }

  it('a field of another grant is an unknown property', async () => {
    const res = await emu.form(TOKEN, { ...complete.client_credentials!, agent_id: AGENT_ID });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('unknown property: agent_id');
    const code = await emu.form(TOKEN, { ...complete.authorization_code!, ttl_seconds: '60' });
    expect(code.body.message).toBe('unknown property: ttl_seconds');
  });

  it('a missing or unsupported grant_type is 400', async () => {
    const missing = await emu.form(TOKEN, { client_id: rt.id, client_secret: rt.secret });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe('grant_type: required');
    const unsupported = await emu.form(TOKEN, { grant_type: 'password', client_id: rt.id, client_secret: rt.secret });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.message).toContain('unsupported_grant_type');
  });

  it('a JSON body that is not an object is 400', async () => {
    const res = await emu.json('POST', TOKEN, { body: ['client_credentials'] });
    expect(res.status).toBe(400);
  });

  it('gives one uniform 401 for an unknown client, a wrong secret and a revoked client', async () => {
    const attempts = [
      { client_id: 'nobody', client_secret: 'whatever' },
      { client_id: rt.id, client_secret: 'wrong-secret' },
      { client_id: CLIENTS.revoked.id, client_secret: CLIENTS.revoked.secret },
    ];
    const bodies = [];
    for (const a of attempts) {
      const res = await emu.form(TOKEN, { grant_type: 'client_credentials', ...a });
      expect(res.status).toBe(401);
      const { traceId: _t, meta: _m, ...rest } = res.body;
      bodies.push(rest);
    }
    expect(bodies[0]).toEqual({ success: false, code: 4010, message: 'client authentication failed', data: null, error: 'invalid_client', error_description: 'client authentication failed' });
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('an h5_app client cannot use client_credentials and a runtime client cannot exchange codes', async () => {
    const h5 = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret });
    expect(h5.status).toBe(400);
    expect(h5.body.error).toBe('unauthorized_client');
    const runtime = await emu.form(TOKEN, { ...complete.refresh_token!, client_id: rt.id, client_secret: rt.secret });
    expect(runtime.status).toBe(400);
    expect(runtime.body.error).toBe('unauthorized_client');
  });
});

describe('rate limit per client_id', () => {
  it('answers 429 rate_limited with Retry-After over limits.per_client_id, per client, and recovers as time passes', async () => {
    const clock = new ManualClock();
    const emu = await startAuthEmulator({ seed: authTestSeed({ per_client_id: 3 }), clock });
    try {
      const request = (client: { id: string; secret: string }) => emu.form(TOKEN, { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret });
      for (let i = 0; i < 3; i++) expect((await request(rt)).status).toBe(200);
      const limited = await request(rt);
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ success: false, code: 4290, error: 'rate_limited' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Wrong secrets count too: the limit is per client_id, before authentication.
      expect((await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: rt.id, client_secret: 'guess' })).status).toBe(429);
      expect((await request(CLIENTS.runtimeKbOnly)).status).toBe(200);
      await clock.advance(1000);
      expect((await request(rt)).status).toBe(200);
    } finally {
      await emu.close();
    }
  });
});

describe('session token lifetime and revocation', () => {
  it('a token works until its ttl passes, then is 401 invalid_session_token', async () => {
    const clock = new ManualClock();
    const emu = await startAuthEmulator({ clock });
    try {
      const token = await sessionToken(emu, rt, { ttl_seconds: '60' });
      expect((await emu.json('GET', DEPARTMENTS, { token })).status).toBe(200);
      await clock.advance(59_999);
      expect((await emu.json('GET', DEPARTMENTS, { token })).status).toBe(200);
      await clock.advance(1);
      const expired = await emu.json('GET', DEPARTMENTS, { token });
      expect(expired.status).toBe(401);
      expect(expired.body.error.code).toBe('invalid_session_token');
    } finally {
      await emu.close();
    }
  });

  it('the default lifetime is 3600 seconds', async () => {
    const clock = new ManualClock();
    const emu = await startAuthEmulator({ clock });
    try {
      const token = await sessionToken(emu);
      await clock.advance(3_599_000);
      expect((await emu.json('GET', DEPARTMENTS, { token })).status).toBe(200);
      await clock.advance(1_000);
      expect((await emu.json('GET', DEPARTMENTS, { token })).status).toBe(401);
    } finally {
      await emu.close();
    }
  });

  it('a revoked token, a forged secret and a malformed st_ value are 401 invalid_session_token', async () => {
    const emu = await startAuthEmulator();
    try {
      const token = await sessionToken(emu);
      const forged = token.replace(/_([A-Za-z0-9]+)$/, '_0000000000000000');
      for (const bad of [forged, 'st_nope', 'st_unknown_secret']) {
        const res = await emu.json('GET', DEPARTMENTS, { token: bad });
        expect(res.status, bad).toBe(401);
        expect(res.body.error.code).toBe('invalid_session_token');
      }
      const revoked = await emu.admin('POST', '/_emulator/session-tokens/revoke', { token });
      expect(revoked.status).toBe(200);
      const res = await emu.json('GET', DEPARTMENTS, { token });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_session_token');
    } finally {
      await emu.close();
    }
  });

  it('the per-session-token limit applies to st_ tokens (limits.per_session_token)', async () => {
    const clock = new ManualClock();
    const emu = await startAuthEmulator({ clock, seed: authTestSeed({ per_session_token: 50 }) });
    try {
      const token = await sessionToken(emu);
      const other = await sessionToken(emu);
      const statuses = [];
      for (let i = 0; i < 51; i++) statuses.push((await emu.json('GET', DEPARTMENTS, { token })).status);
      expect(statuses.slice(0, 50).every((s) => s === 200)).toBe(true);
      expect(statuses[50]).toBe(429);
      const limited = await emu.json('GET', DEPARTMENTS, { token });
      expect(limited.body.error.code).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await emu.json('GET', DEPARTMENTS, { token: other })).status).toBe(200);
      // The ek_ key of the same tenant is not limited by the session token's budget.
      expect((await emu.json('GET', DEPARTMENTS, { token: KEYS.acmeOrgRw })).status).toBe(200);
      await clock.advance(1000);
      expect((await emu.json('GET', DEPARTMENTS, { token })).status).toBe(200);
    } finally {
      await emu.close();
    }
  });
});
