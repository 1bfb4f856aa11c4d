/** Discovery document and key set: every required field, RS256 keys, rotation, removal, the keys_unavailable fault. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAuthEmulator, type AuthEmulator } from './support.js';

describe('discovery and key set', () => {
  let emu: AuthEmulator;
  beforeEach(async () => {
    emu = await startAuthEmulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  it('serves every required discovery field with the spec values', async () => {
    const res = await emu.json('GET', '/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    const d = res.body;
    expect(d.issuer).toBe(emu.url);
    expect(d.token_endpoint).toBe(`${emu.url}/api/external/v1/oauth/token`);
    expect(d.jwks_uri).toBe(`${emu.url}/.well-known/jwks.json`);
    expect(typeof d.authorization_endpoint).toBe('string');
    expect(d.response_types_supported).toEqual(['code']);
    expect(d.grant_types_supported).toEqual(['client_credentials', 'runtime_access', 'authorization_code', 'refresh_token']);
    expect(d.subject_types_supported).toEqual(['public']);
    expect(d.id_token_signing_alg_values_supported).toEqual(['RS256']);
    expect(d.token_endpoint_auth_methods_supported).toEqual(['client_secret_post', 'client_secret_basic']);
    expect(d.scopes_supported).toEqual(['openid', 'email', 'profile', 'kb.read', 'contacts.read']);
    expect(d.claims_supported).toEqual(['sub', 'email', 'email_verified', 'name', 'phone_number', 'tenant', 'membership', 'svc_context', 'nonce']);
  });

  it('lists an active and a retiring RS256 key with kty, use, alg, kid, n, e', async () => {
    const res = await emu.json('GET', '/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(2);
    for (const key of res.body.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', use: 'sig', alg: 'RS256', e: 'AQAB' });
      expect(key.n).toMatch(/^[A-Za-z0-9_-]{300,}$/);
    }
    expect(new Set(res.body.keys.map((k: { kid: string }) => k.kid)).size).toBe(2);
    const admin = await emu.admin('GET', '/_emulator/keys');
    expect(admin.body.keys.map((k: { status: string }) => k.status)).toEqual(['active', 'retiring']);
    expect(admin.body.keys.map((k: { kid: string }) => k.kid)).toEqual(res.body.keys.map((k: { kid: string }) => k.kid));
  });

  it('rotation makes a new active key, retires the old one and drops the older retiring key', async () => {
    const before = (await emu.admin('GET', '/_emulator/keys')).body.keys as { kid: string; status: string }[];
    const rotated = await emu.admin('POST', '/_emulator/keys/rotate');
    expect(rotated.status).toBe(200);
    const after = rotated.body.keys as { kid: string; status: string }[];
    expect(after).toHaveLength(2);
    expect(after[0]!.status).toBe('active');
    expect(before.map((k) => k.kid)).not.toContain(after[0]!.kid);
    expect(after[1]).toEqual({ kid: before[0]!.kid, status: 'retiring' });
    const jwks = await emu.json('GET', '/.well-known/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(after.map((k) => k.kid));
  });

  it('removes a retiring key from the set, refuses to remove the active key, 404 for an unknown kid', async () => {
    const [active, retiring] = (await emu.admin('GET', '/_emulator/keys')).body.keys as { kid: string }[];
    expect((await emu.admin('DELETE', `/_emulator/keys/${active!.kid}`)).status).toBe(409);
    const removed = await emu.admin('DELETE', `/_emulator/keys/${retiring!.kid}`);
    expect(removed.status).toBe(200);
    expect(removed.body.keys).toEqual([{ kid: active!.kid, status: 'active' }]);
    const jwks = await emu.json('GET', '/.well-known/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual([active!.kid]);
    expect((await emu.admin('DELETE', `/_emulator/keys/${retiring!.kid}`)).status).toBe(404);
  });

  it('answers 503 with a plain-text keys_unavailable body while the fault switch is on', async () => {
    expect((await emu.admin('PUT', '/_emulator/jwks/unavailable')).status).toBe(204);
    const res = await fetch(`${emu.url}/.well-known/jwks.json`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(JSON.parse(await res.text())).toEqual({ error: 'keys_unavailable' });
    expect((await emu.admin('DELETE', '/_emulator/jwks/unavailable')).status).toBe(204);
    expect((await emu.json('GET', '/.well-known/jwks.json')).status).toBe(200);
  });

  it('the key set admin routes need the admin token', async () => {
    expect((await emu.json('POST', '/_emulator/keys/rotate', { token: 'wrong' })).status).toBe(401);
    expect((await emu.json('POST', '/_emulator/keys/rotate')).status).toBe(401);
  });
});

describe('without an admin token', () => {
  it('has no auth admin routes', async () => {
    const emu = await startAuthEmulator({ adminToken: null });
    try {
      for (const path of ['/_emulator/keys/rotate', '/_emulator/authorization-codes', '/_emulator/login-tokens', '/_emulator/login-tokens/revoke']) {
        expect((await emu.json('POST', path, { token: 'anything', body: {} })).status).toBe(404);
      }
    } finally {
      await emu.close();
    }
  });
});
