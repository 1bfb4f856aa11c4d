/**
 * Real OAuth/OIDC clients that no one on this project wrote, against the emulator over loopback:
 * openid-client 6 (discovery, the authorization_code exchange with ID token validation, refresh, Basic client
 * authentication) and jose's createRemoteJWKSet (verifies an access token; fails once the signing key is removed).
 */
import * as client from 'openid-client';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationCode, BOB_ACCOUNT, CLIENTS, REDIRECT_URI, startAuthEmulator, type AuthEmulator } from './support.js';

const h5 = CLIENTS.h5;

/** openid-client refuses http:// issuers unless told; the emulator listens on plain loopback HTTP. */
async function discover(emu: AuthEmulator, auth: 'post' | 'basic' = 'post'): Promise<client.Configuration> {
  const clientAuth = auth === 'post' ? client.ClientSecretPost(h5.secret) : client.ClientSecretBasic(h5.secret);
  return client.discovery(new URL(emu.url), h5.id, { client_secret: h5.secret }, clientAuth, { execute: [client.allowInsecureRequests] });
}

/** The URL the H5 backend's callback would be called with. */
function callbackUrl(code: string): URL {
  const url = new URL(REDIRECT_URI);
  url.searchParams.set('code', code);
  return url;
}

describe('openid-client against the emulator', () => {
  let emu: AuthEmulator;
  beforeAll(async () => {
    emu = await startAuthEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('discovers the issuer, exchanges a code and validates the ID token (issuer, audience, exp, nonce)', async () => {
    const config = await discover(emu);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(emu.url);
    expect(meta.token_endpoint).toBe(`${emu.url}/api/external/v1/oauth/token`);

    const nonce = client.randomNonce();
    const code = await authorizationCode(emu, { nonce, scope: 'openid email profile kb.read' });
    const tokens = await client.authorizationCodeGrant(config, callbackUrl(code), { expectedNonce: nonce, idTokenExpected: true });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('openid email profile kb.read');
    expect(typeof tokens.refresh_token).toBe('string');
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: emu.url, aud: h5.id, sub: BOB_ACCOUNT, nonce, email: 'bob@acme.test', name: 'Bob Builder' });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()!.sub).toBe(BOB_ACCOUNT);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toThrow();
  });

  it('rejects an ID token whose nonce is not the expected one', async () => {
    const config = await discover(emu);
    const code = await authorizationCode(emu, { nonce: 'the-nonce-sent' });
    await expect(client.authorizationCodeGrant(config, callbackUrl(code), { expectedNonce: 'another-nonce' })).rejects.toMatchObject({
      code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
    });
  });

  it('authenticates with client_secret_basic too', async () => {
    const config = await discover(emu, 'basic');
    const code = await authorizationCode(emu);
    const tokens = await client.authorizationCodeGrant(config, callbackUrl(code));
    expect(tokens.claims()!.aud).toBe(h5.id);
  });

  it('surfaces invalid_grant for a used code', async () => {
    const config = await discover(emu);
    const code = await authorizationCode(emu);
    await client.authorizationCodeGrant(config, callbackUrl(code));
    // The token endpoint answers shape 1 with RFC 6749's error string alongside, so the client reports an OAuth error.
    const failure = await client.authorizationCodeGrant(config, callbackUrl(code)).then(
      () => undefined,
      (err: unknown) => err as { name?: string; error?: string; status?: number; error_description?: string },
    );
    expect(failure?.name).toBe('ResponseBodyError');
    expect(failure?.error).toBe('invalid_grant');
    expect(failure?.status).toBe(400);
    expect(failure?.error_description).toContain('invalid_grant');
  });
});

describe("jose's createRemoteJWKSet against the emulator", () => {
  it('verifies an access token, keeps verifying after rotation, and fails after its key is removed', async () => {
    const emu = await startAuthEmulator();
    try {
      const config = await discover(emu);
      const jwksUri = new URL(config.serverMetadata().jwks_uri!);
      const code = await authorizationCode(emu, { scope: 'openid contacts.read' });
      const { access_token: accessToken } = await client.authorizationCodeGrant(config, callbackUrl(code));

      const verified = await jwtVerify(accessToken, createRemoteJWKSet(jwksUri), { issuer: emu.url, audience: h5.id, algorithms: ['RS256'] });
      expect(verified.payload.sub).toBe(BOB_ACCOUNT);
      const signingKid = verified.protectedHeader.kid!;

      const rotated = await emu.admin('POST', '/_emulator/keys/rotate');
      expect(rotated.body.keys[1]).toEqual({ kid: signingKid, status: 'retiring' });
      await expect(jwtVerify(accessToken, createRemoteJWKSet(jwksUri), { issuer: emu.url })).resolves.toBeDefined();

      expect((await emu.admin('DELETE', `/_emulator/keys/${signingKid}`)).status).toBe(200);
      await expect(jwtVerify(accessToken, createRemoteJWKSet(jwksUri), { issuer: emu.url })).rejects.toBeInstanceOf(joseErrors.JWKSNoMatchingKey);
    } finally {
      await emu.close();
    }
  });

  it('fails to fetch the key set while keys are unavailable (503)', async () => {
    const emu = await startAuthEmulator();
    try {
      const code = await authorizationCode(emu);
      const config = await discover(emu);
      const { access_token: accessToken } = await client.authorizationCodeGrant(config, callbackUrl(code));
      await emu.admin('PUT', '/_emulator/jwks/unavailable');
      await expect(jwtVerify(accessToken, createRemoteJWKSet(new URL(`${emu.url}/.well-known/jwks.json`)))).rejects.toThrow();
    } finally {
      await emu.close();
    }
  });
});
