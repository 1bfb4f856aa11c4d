/**
 * authorization_code and refresh_token: RS256 access and ID tokens, nonce, single use, rotation, exact redirect_uri,
 * invalid_grant, and the admin route that stands in for the platform's own client.
 */
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { appTokens, authorizationCode, BOB_ACCOUNT, CLIENTS, REDIRECT_URI, startAuthEmulator, TOKEN, type AuthEmulator } from './support.js';

const h5 = CLIENTS.h5;

function exchange(emu: AuthEmulator, code: string, overrides: Record<string, string> = {}) {
  return emu.form(TOKEN, { grant_type: 'authorization_code', code, client_id: h5.id, client_secret: h5.secret, redirect_uri: REDIRECT_URI, ...overrides });
}

function refresh(emu: AuthEmulator, refreshToken: string, client: { id: string; secret: string } = h5) {
  return emu.form(TOKEN, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.id, client_secret: client.secret });
}

function expectInvalidGrant(res: { status: number; body: { success: boolean; message: string } }): void {
  expect(res.status).toBe(400);
  expect(res.body.success).toBe(false);
  expect(res.body.message).toContain('invalid_grant');
  // RFC 6749 section 5.2, for OAuth client libraries.
  expect((res.body as unknown as { error: string }).error).toBe('invalid_grant');
}

describe('authorization_code and refresh_token', () => {
  let emu: AuthEmulator;
  beforeAll(async () => {
    emu = await startAuthEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('exchanges a code for an RS256 access token, an ID token and a refresh token', async () => {
    const res = await appTokens(emu, { nonce: 'n-0S6_WzA2Mj' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const b = res.body;
    expect(Object.keys(b).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type']);
    expect(b).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid email profile kb.read contacts.read' });
    expect(typeof b.refresh_token).toBe('string');

    const jwks = createRemoteJWKSet(new URL(`${emu.url}/.well-known/jwks.json`));
    const keys = (await emu.admin('GET', '/_emulator/keys')).body.keys as { kid: string; status: string }[];

    const id = await jwtVerify(b.id_token, jwks, { issuer: emu.url, audience: h5.id, algorithms: ['RS256'] });
    expect(id.protectedHeader).toMatchObject({ alg: 'RS256', kid: keys[0]!.kid });
    expect(id.payload).toMatchObject({
      iss: emu.url,
      aud: h5.id,
      sub: BOB_ACCOUNT,
      nonce: 'n-0S6_WzA2Mj',
      email: 'bob@acme.test',
      email_verified: true,
      name: 'Bob Builder',
      phone_number: '+15550101',
      tenant: { id: 1001, name: 'Acme' },
      membership: { status: 'active', roles: ['tenant.member'] },
      svc_context: { client_id: h5.id },
    });
    expect(id.payload.exp! - id.payload.iat!).toBe(3600);

    const access = await jwtVerify(b.access_token, jwks, { issuer: emu.url, audience: h5.id, typ: 'at+jwt' });
    expect(access.payload).toMatchObject({ sub: BOB_ACCOUNT, client_id: h5.id, tenant_id: 1001, scope: 'openid email profile kb.read contacts.read' });
    expect(access.payload.exp! - access.payload.iat!).toBe(3600);
  });

  it('leaves nonce out of the ID token when the authorization request had none', async () => {
    const res = await appTokens(emu);
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.id_token)).not.toHaveProperty('nonce');
  });

  it('a code is single-use', async () => {
    const code = await authorizationCode(emu);
    expect((await exchange(emu, code)).status).toBe(200);
    expectInvalidGrant(await exchange(emu, code));
  });

  it('an unknown code, or another client\'s code, is invalid_grant', async () => {
    expectInvalidGrant(await exchange(emu, 'not-a-code'));
    const code = await authorizationCode(emu);
    expectInvalidGrant(await exchange(emu, code, { client_id: CLIENTS.h5KbOnly.id, client_secret: CLIENTS.h5KbOnly.secret }));
    // The rightful client can still use it.
    expect((await exchange(emu, code)).status).toBe(200);
  });

  it('redirect_uri must equal the registered value exactly', async () => {
    const code = await authorizationCode(emu);
    for (const uri of [`${REDIRECT_URI}/`, REDIRECT_URI.toUpperCase(), `${REDIRECT_URI}?x=1`, 'https://evil.test/callback']) {
      expectInvalidGrant(await exchange(emu, code, { redirect_uri: uri }));
    }
    expect((await exchange(emu, code)).status).toBe(200);
  });

  it('a code issued for an unregistered redirect_uri cannot be exchanged', async () => {
    const code = await authorizationCode(emu, { redirectUri: 'https://elsewhere.test/cb' });
    expectInvalidGrant(await exchange(emu, code, { redirect_uri: 'https://elsewhere.test/cb' }));
  });

  it('client authentication at the exchange is the uniform 401', async () => {
    const code = await authorizationCode(emu);
    const res = await exchange(emu, code, { client_secret: 'wrong' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, code: 4010, error: 'invalid_client' });
  });

  it('refresh rotates: new tokens and a new refresh token; the old refresh token is invalid at once', async () => {
    const first = (await appTokens(emu, { nonce: 'abc' })).body;
    const second = await refresh(emu, first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.scope).toBe(first.scope);
    const id = decodeJwt(second.body.id_token);
    expect(id).toMatchObject({ iss: emu.url, aud: h5.id, sub: BOB_ACCOUNT });
    expect(id).not.toHaveProperty('nonce');
    expectInvalidGrant(await refresh(emu, first.refresh_token));
    const third = await refresh(emu, second.body.refresh_token);
    expect(third.status).toBe(200);
    expectInvalidGrant(await refresh(emu, second.body.refresh_token));
  });

  it('a refresh token is bound to its client; unknown values are invalid_grant', async () => {
    const tokens = (await appTokens(emu)).body;
    expectInvalidGrant(await refresh(emu, tokens.refresh_token, CLIENTS.h5KbOnly));
    expectInvalidGrant(await refresh(emu, 'no-such-refresh-token'));
  });

  it('API scopes the client does not hold are left out of the grant', async () => {
    const res = await appTokens(emu, { client: CLIENTS.h5KbOnly.id, scope: 'openid kb.read contacts.read' });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('openid kb.read');
    expect(decodeJwt(res.body.access_token).scope).toBe('openid kb.read');
  });

  it('access tokens carry the typ at+jwt and the kid of the active key', async () => {
    const res = await appTokens(emu);
    const header = decodeProtectedHeader(res.body.access_token);
    const keys = (await emu.admin('GET', '/_emulator/keys')).body.keys as { kid: string }[];
    expect(header).toEqual({ alg: 'RS256', kid: keys[0]!.kid, typ: 'at+jwt' });
  });
});

describe('the authorization-codes admin route', () => {
  let emu: AuthEmulator;
  beforeAll(async () => {
    emu = await startAuthEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  const base = { tenant_id: 1001, client_id: h5.id, email: 'bob@acme.test', redirect_uri: REDIRECT_URI, nonce: 'n', scope: 'openid email profile kb.read' };

  it('answers {"code"} for the example request of the issue', async () => {
    const res = await emu.admin('POST', '/_emulator/authorization-codes', base);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['code']);
    expect(typeof res.body.code).toBe('string');
  });

  it('refuses unknown tenants, clients, members and scope values', async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ tenant_id: 9999 }, 404],
      [{ client_id: 'nobody' }, 404],
      [{ client_id: 'globex-h5' }, 404],
      [{ client_id: CLIENTS.runtime.id }, 400],
      [{ email: 'nobody@acme.test' }, 404],
      [{ email: 'gina@globex.test' }, 404],
      [{ scope: 'openid admin' }, 400],
      [{ email: undefined }, 400],
    ];
    for (const [change, status] of cases) {
      const res = await emu.admin('POST', '/_emulator/authorization-codes', { ...base, ...change });
      expect(res.status, JSON.stringify(change)).toBe(status);
      expect(typeof res.body.error.message).toBe('string');
    }
  });

  it('defaults redirect_uri to the single registered one', async () => {
    const { redirect_uri: _r, ...withoutRedirect } = base;
    const res = await emu.admin('POST', '/_emulator/authorization-codes', withoutRedirect);
    expect(res.status).toBe(200);
    expect((await exchange(emu, res.body.code)).status).toBe(200);
  });
});

describe('expiry of codes and refresh tokens (ManualClock)', () => {
  it('a code expires after 600 seconds, a refresh token after 30 days', async () => {
    const clock = new ManualClock(Date.now());
    const emu = await startAuthEmulator({ clock });
    try {
      const code = await authorizationCode(emu);
      const late = await authorizationCode(emu);
      await clock.advance(599_000);
      const tokens = await exchange(emu, code);
      expect(tokens.status).toBe(200);
      await clock.advance(1_000);
      expectInvalidGrant(await exchange(emu, late));

      // The refresh token was issued 1 s ago; it lives 30 days.
      await clock.advance(30 * 24 * 3600 * 1000 - 1_001);
      const fresh = await refresh(emu, tokens.body.refresh_token);
      expect(fresh.status).toBe(200);
      await clock.advance(30 * 24 * 3600 * 1000);
      expectInvalidGrant(await refresh(emu, fresh.body.refresh_token));
    } finally {
      await emu.close();
    }
  });
});
