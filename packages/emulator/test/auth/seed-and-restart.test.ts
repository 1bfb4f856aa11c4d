import { fileURLToPath } from 'node:url';
/** The auth part of the seed (example file, validation errors) and what survives a restart with a --db file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSeedFile, parseSeed } from '../../src/index.js';
import { authTestSeed, CLIENTS, sessionToken, startAuthEmulator, TOKEN } from './support.js';

describe('seed', () => {
  it('the example seed registers its OAuth clients and auth settings', async () => {
    const seed = loadSeedFile(fileURLToPath(new URL('../../../../config/seed.example.yaml', import.meta.url)));
    expect(seed.tenants[0]!.oauth_clients.map((c) => c.client_id)).toEqual(['rt-client', 'h5-client']);
    expect(seed.auth.authorization_code_ttl_seconds).toBe(600);
    const emu = await startAuthEmulator({ seed: seed as unknown as Record<string, unknown> });
    try {
      const res = await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: 'rt-client', client_secret: 'rt-secret-value' });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('tenant.org.read tenant.kb.read tenant.memory.read');
    } finally {
      await emu.close();
    }
  });

  it('defaults: no clients, capabilities of an h5_app are both API scopes, lifetimes as documented', () => {
    const seed = parseSeed({ tenants: [{ id: 1, name: 'T', oauth_clients: [{ client_id: 'a', client_secret: 's', kind: 'h5_app' }] }] });
    expect(seed.tenants[0]!.oauth_clients[0]).toMatchObject({ redirect_uris: [], revoked: false });
    expect(seed.auth).toEqual({
      access_token_ttl_seconds: 3600,
      id_token_ttl_seconds: 3600,
      refresh_token_ttl_seconds: 2592000,
      authorization_code_ttl_seconds: 600,
      max_session_ttl_seconds: 86400,
      login_token_ttl_seconds: 3600,
      introspection_cache_ttl_seconds: 300,
    });
    expect(parseSeed({ tenants: [{ id: 1, name: 'T' }] }).tenants[0]!.oauth_clients).toEqual([]);
  });

  it('refuses an unknown kind, an unknown key and a bad redirect URI, naming the path', () => {
    const base = { client_id: 'a', client_secret: 's', kind: 'runtime' };
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...base, kind: 'robot' }, /oauth_clients\.0\.kind|oauth_clients\[0\]\.kind/],
      [{ ...base, scopes: [] }, /scopes/],
      [{ ...base, redirect_uris: ['not a url'] }, /redirect_uris/],
      [{ ...base, capabilities: ['Org Read'] }, /capabilities/],
    ];
    for (const [client, message] of bad) {
      expect(() => parseSeed({ tenants: [{ id: 1, name: 'T', oauth_clients: [client] }] }), JSON.stringify(client)).toThrow(message);
    }
  });

  it('refuses a client_id used twice, naming it', async () => {
    const seed = authTestSeed();
    const tenants = seed.tenants as { oauth_clients: unknown[] }[];
    tenants[1]!.oauth_clients.push({ client_id: CLIENTS.runtime.id, client_secret: 'x', kind: 'runtime' });
    await expect(startAuthEmulator({ seed })).rejects.toThrow(/rt-client/);
  });
});

describe('restart with a --db file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-auth-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the signing keys, session tokens and refresh tokens', async () => {
    const dbPath = join(dir, 'emulator.db');
    const first = await startAuthEmulator({ dbPath });
    const st = await sessionToken(first);
    const jwks = (await first.json('GET', '/.well-known/jwks.json')).body;
    const code = await first.admin('POST', '/_emulator/authorization-codes', { tenant_id: 1001, client_id: CLIENTS.h5.id, email: 'bob@acme.test', scope: 'openid contacts.read' });
    const tokens = (await first.form(TOKEN, { grant_type: 'authorization_code', code: code.body.code, client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret, redirect_uri: 'https://app.acme.test/callback' })).body;
    await first.close();

    const second = await startAuthEmulator({ dbPath });
    try {
      expect((await second.json('GET', '/.well-known/jwks.json')).body).toEqual(jwks);
      expect((await second.json('GET', '/api/external/v1/org/departments', { token: st })).status).toBe(200);
      const refreshed = await second.form(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret });
      expect(refreshed.status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('client kind', () => {
  it('is inferred when absent: h5_app with redirect URIs, else runtime', async () => {
    const emu = await startAuthEmulator({
      seed: {
        tenants: [{
          id: 7,
          name: 'Seven',
          members: [{ display_name: 'Sue', email: 'sue@seven.test' }],
          oauth_clients: [
            { client_id: 'svc', client_secret: 'svc-secret', capabilities: ['org.read'] },
            { client_id: 'web', client_secret: 'web-secret', redirect_uris: ['https://web.seven.test/cb'] },
          ],
        }],
      },
    });
    try {
      expect((await emu.form(TOKEN, { grant_type: 'client_credentials', client_id: 'svc', client_secret: 'svc-secret' })).status).toBe(200);
      const code = await emu.admin('POST', '/_emulator/authorization-codes', { tenant_id: 7, client_id: 'web', email: 'sue@seven.test', scope: 'openid contacts.read kb.read' });
      expect(code.status).toBe(200);
      const tokens = await emu.form(TOKEN, { grant_type: 'authorization_code', code: code.body.code, client_id: 'web', client_secret: 'web-secret', redirect_uri: 'https://web.seven.test/cb' });
      expect(tokens.status).toBe(200);
      expect(tokens.body.scope).toBe('openid contacts.read kb.read');
    } finally {
      await emu.close();
    }
  });
});
