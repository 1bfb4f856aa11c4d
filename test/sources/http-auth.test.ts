/**
 * auth: of an HTTP source against a vendor double on loopback with the real flows (test/helpers/hr-vendor.ts): a
 * token endpoint for OAuth2 client credentials and for a Google service account's JWT bearer assertion, tokens that
 * expire mid-walk by the injected clock or are revoked, HTTP Basic, and failures named in one line.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ManualClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { readDesiredState } from '../../src/sources/index.js';
import { clearHeldTokens } from '../../src/sources/http/auth.js';
import { startVendor, type Vendor } from '../helpers/hr-vendor.js';
import { sourcesConfig } from './support.js';
import { tempDir } from '../helpers/temp.js';

const people = Array.from({ length: 9 }, (_, i) => ({ id: `e${i + 1}`, name: `Person ${i + 1}`, mail: `e${i + 1}@example.com` }));
/** Three pages of three; every page served moves the clock on by `step` ms (a slow walk). */
const pagedRoutes = (clock: ManualClock, step: number) => ({
  '/api/people': (url: URL) => {
    const p = Number(url.searchParams.get('page') ?? 1);
    void clock.advance(step);
    return { results: people.slice((p - 1) * 3, p * 3) };
  },
});
const fields = { id: 'id', display_name: 'name', email: 'mail' };
const members = (v: Vendor) => ({ url: `${v.base}/api/people`, items_path: 'results', pagination: { type: 'page', size: 3, size_param: 'per_page' }, fields });

let dir: string;
beforeAll(() => {
  dir = tempDir('orgsync-auth-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => clearHeldTokens());

const readWith = (clock: ManualClock, sources: unknown[]) => readDesiredState(sourcesConfig(sources, dir), { env: {}, logger: silentLogger, clock });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );

describe('oauth2-client-credentials', () => {
  it('fetches a token, reuses it, and fetches again before it expires mid-walk', async () => {
    const clock = new ManualClock();
    // Tokens live 120 s; each page takes 50 s: pages start at 0, 50, 100 and 150 s. The held token is renewed from
    // 108 s on (12 s early), so the fourth page goes with a new token instead of meeting the vendor's 401 at 120 s.
    const v = await startVendor({ clock, auth: { kind: 'oauth', clients: { 'client-1': 'sekret-value' }, lifetimeSeconds: 120, scope: 'api.read' }, routes: pagedRoutes(clock, 50_000) });
    try {
      const state = await readWith(clock, [
        { name: 'hr', type: 'hris-json', auth: { type: 'oauth2-client-credentials', token_url: v.tokenUrl, client_id: 'client-1', client_secret: 'sekret-value', scope: 'api.read' }, members: members(v) },
      ]);
      expect([...state.members].map((m) => m.source_id)).toEqual(people.map((p) => p.id));
      expect(v.issued).toHaveLength(2);
      expect(v.rejected).toBe(0);
      const api = v.requests.filter((r) => r.path === '/api/people');
      expect(api.map((r) => r.headers.authorization)).toEqual([`Bearer ${v.issued[0]}`, `Bearer ${v.issued[0]}`, `Bearer ${v.issued[0]}`, `Bearer ${v.issued[1]}`]);
      const tokenReq = v.requests.find((r) => r.path === '/oauth2/token')!;
      expect(Object.fromEntries(new URLSearchParams(tokenReq.body))).toEqual({ grant_type: 'client_credentials', client_id: 'client-1', client_secret: 'sekret-value', scope: 'api.read' });
    } finally {
      await v.close();
    }
  });

  it('a token revoked mid-walk: one 401, a fresh token, the page again', async () => {
    const clock = new ManualClock();
    const v = await startVendor({ clock, auth: { kind: 'oauth', clients: { c: 'sekret-value' }, clientAuth: 'basic', lifetimeSeconds: 3600, revokeAfterUses: 2 }, routes: pagedRoutes(clock, 0) });
    try {
      const state = await readWith(clock, [{ name: 'hr', type: 'hris-json', auth: { type: 'oauth2-client-credentials', token_url: v.tokenUrl, client_id: 'c', client_secret: 'sekret-value', client_auth: 'basic' }, members: members(v) }]);
      expect(state.members).toHaveLength(9);
      expect(v.issued).toHaveLength(2);
      expect(v.rejected).toBe(1);
      expect(v.requests.map((r) => r.path)).toEqual(['/oauth2/token', '/api/people', '/api/people', '/api/people', '/oauth2/token', '/api/people', '/api/people']);
    } finally {
      await v.close();
    }
  });

  it('keeps the token between reads (the daemon\'s next run) until it is due', async () => {
    const clock = new ManualClock();
    const v = await startVendor({ clock, auth: { kind: 'oauth', clients: { c: 'sekret-value' }, lifetimeSeconds: 3600 }, routes: pagedRoutes(clock, 0) });
    try {
      const src = [{ name: 'hr', type: 'hris-json', auth: { type: 'oauth2-client-credentials', token_url: v.tokenUrl, client_id: 'c', client_secret: 'sekret-value' }, members: members(v) }];
      await readWith(clock, src);
      await clock.advance(30 * 60_000);
      await readWith(clock, src);
      expect(v.issued).toHaveLength(1);
      await clock.advance(30 * 60_000);
      await readWith(clock, src);
      expect(v.issued).toHaveLength(2);
    } finally {
      await v.close();
    }
  });

  it('a failed token request fails the source in one line naming the token URL and the OAuth error, never the secret', async () => {
    const clock = new ManualClock();
    const v = await startVendor({ clock, auth: { kind: 'oauth', clients: { c: 'right-secret' }, lifetimeSeconds: 3600 }, routes: pagedRoutes(clock, 0) });
    try {
      const err = await failure(readWith(clock, [{ name: 'hr', type: 'hris-json', auth: { type: 'oauth2-client-credentials', token_url: `${v.tokenUrl}?tenant=x`, client_id: 'c', client_secret: 'wrong-secret' }, members: members(v) }]));
      expect(err?.code).toBe('SOURCE_UNREADABLE');
      expect(err?.message).toBe(`source "hr": token request to ${v.tokenUrl} failed: invalid_client (Client authentication failed), HTTP 401`);
      expect(v.requests.filter((r) => r.path === '/api/people')).toEqual([]);
    } finally {
      await v.close();
    }
  });

  it('an API that keeps answering 401 with a fresh token fails the source', async () => {
    const clock = new ManualClock();
    const v = await startVendor({ clock, auth: { kind: 'oauth', clients: { c: 'sekret-value' }, lifetimeSeconds: 3600, revokeAfterUses: 0 }, routes: pagedRoutes(clock, 0) });
    try {
      const err = await failure(readWith(clock, [{ name: 'hr', type: 'hris-json', auth: { type: 'oauth2-client-credentials', token_url: v.tokenUrl, client_id: 'c', client_secret: 'sekret-value' }, members: members(v) }]));
      expect(err?.message).toBe(`source "hr": members: GET ${v.base}/api/people?page=1&per_page=3 answered HTTP 401 (also with a fresh token): the HR system refused the credential: check auth (oauth2-client-credentials, client_id "c"; auth.client_secret): it must be current (not revoked or expired) and of this tenant, and the credential needs read access to this URL; the server said: {"error":{"code":"InvalidAuthenticationToken","message":"Access token has expired or is not yet valid."}}`);
      expect(v.issued).toHaveLength(2);
    } finally {
      await v.close();
    }
  });
});

describe('google-service-account', () => {
  it('signs a JWT assertion for the subject and scopes, exchanges it, and renews the token when it expires mid-walk', async () => {
    const clock = new ManualClock(Date.now());
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const email = 'orgsync@proj.iam.gserviceaccount.com';
    const scope = 'https://www.googleapis.com/auth/admin.directory.user.readonly';
    const v = await startVendor({
      clock,
      tokenPath: '/token',
      // Tokens live 100 s and each page takes 60 s: the second page needs a new token.
      auth: { kind: 'oauth', lifetimeSeconds: 100, jwt: { key: await importSPKI(await exportSPKI(publicKey), 'RS256'), issuer: email, subject: 'admin@example.com', scope } },
      routes: pagedRoutes(clock, 60_000),
    });
    try {
      writeFileSync(join(dir, 'sa.json'), JSON.stringify({ type: 'service_account', client_email: email, private_key_id: 'kid-1', private_key: await exportPKCS8(privateKey), token_uri: v.tokenUrl }));
      const src = { name: 'gws', type: 'hris-json', auth: { type: 'google-service-account', key_file: 'sa.json', subject: 'admin@example.com', scopes: [scope] }, members: members(v) };
      const state = await readWith(clock, [src]);
      expect(state.members).toHaveLength(9);
      expect(v.rejected).toBe(0);
      expect(v.issued.length).toBeGreaterThanOrEqual(2);
      const form = new URLSearchParams(v.requests.find((r) => r.path === '/token')!.body);
      expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
      expect(form.get('assertion')?.split('.')).toHaveLength(3);

      // Another subject is refused by the token endpoint: one line with the token URL and the OAuth error.
      clearHeldTokens();
      const err = await failure(readWith(clock, [{ ...src, auth: { ...src.auth, subject: 'someone@example.com' } }]));
      expect(err?.message).toBe(`source "gws": token request to ${v.tokenUrl} failed: invalid_grant (Invalid JWT: unexpected "sub" claim value), HTTP 400`);
    } finally {
      await v.close();
    }
  });

  it('a key file that is missing or has no private key fails the source naming the file', async () => {
    const clock = new ManualClock();
    writeFileSync(join(dir, 'bad-sa.json'), JSON.stringify({ client_email: 'x@y' }));
    const src = (key_file: string) => [{ name: 'gws', type: 'hris-json', auth: { type: 'google-service-account', key_file, subject: 'a@b', scopes: ['s'] }, members: { url: 'http://127.0.0.1:9/x', fields } }];
    expect((await failure(readWith(clock, src('bad-sa.json'))))?.message).toBe(`source "gws": the service account key_file ${join(dir, 'bad-sa.json')} has no private_key`);
    expect((await failure(readWith(clock, src('none.json'))))?.message).toBe(`source "gws": cannot read the service account key_file ${join(dir, 'none.json')}: ENOENT`);
  });
});

describe('basic and bearer', () => {
  it('basic: the vendor accepts the header; a wrong password is a 401 that fails the source', async () => {
    const clock = new ManualClock();
    const v = await startVendor({ clock, auth: { kind: 'basic', username: 'isu@acme', password: 'pw-value-1' }, routes: pagedRoutes(clock, 0) });
    try {
      const state = await readWith(clock, [{ name: 'wd', type: 'hris-json', auth: { type: 'basic', username: 'isu@acme', password: 'pw-value-1' }, members: members(v) }]);
      expect(state.members).toHaveLength(9);
      const err = await failure(readWith(clock, [{ name: 'wd', type: 'hris-json', max_attempts: 1, auth: { type: 'basic', username: 'isu@acme', password: 'wrong' }, members: members(v) }]));
      expect(err?.message).toBe(`source "wd": members: GET ${v.base}/api/people?page=1&per_page=3 answered HTTP 401: the HR system refused the credential: check auth (basic, user "isu@acme"; auth.password): it must be current (not revoked or expired) and of this tenant, and the credential needs read access to this URL; the server said: {"error":"unauthorized"}`);
    } finally {
      await v.close();
    }
  });

  it('bearer from token_file', async () => {
    const clock = new ManualClock();
    const v = await startVendor({ clock, auth: { kind: 'bearer-static', token: 'static-token-1' }, routes: pagedRoutes(clock, 0) });
    try {
      writeFileSync(join(dir, 'token'), 'static-token-1\n');
      writeFileSync(join(dir, 'orgsync.yaml'), 'x');
      const cfg = parseConfig(
        `platform: { base_url: "http://127.0.0.1:1", api_key: k }\nsources:\n  - name: hr\n    type: hris-json\n    auth: { type: bearer, token_file: token }\n    members: { url: "${v.base}/api/people", items_path: results, pagination: { type: page, size: 3 }, fields: { id: id, display_name: name, email: mail } }\n`,
        join(dir, 'orgsync.yaml'),
        {},
      );
      expect(cfg.meta.secrets).toContain('static-token-1');
      const state = await readDesiredState(cfg, { env: {}, logger: silentLogger, clock });
      expect(state.members).toHaveLength(9);
    } finally {
      await v.close();
    }
  });

  it('a secret written into the config is refused when the config is loaded', () => {
    const text = (auth: string) => `platform: { base_url: "http://127.0.0.1:1", api_key: k }\nsources:\n  - name: hr\n    type: hris-json\n    auth: ${auth}\n    members: { url: "http://127.0.0.1:1/x", fields: { id: id, display_name: name } }\n`;
    expect(() => parseConfig(text('{ type: bearer, token: abcdef }'), '/etc/orgsync.yaml', {})).toThrow(
      '/etc/orgsync.yaml:5:27: sources[0].auth.token: give the secret from the environment ("${VAR}") or a file (token_file), not in the config',
    );
    expect(() => parseConfig(text('{ type: oauth2-client-credentials, token_url: "https://login.example/t", client_id: c, client_secret: "${S}" }'), '/etc/orgsync.yaml', { S: 'from-env-1' })).not.toThrow();
    expect(() => parseConfig(text('{ type: basic, username: "${KEY}", password: x }'), '/etc/orgsync.yaml', { KEY: 'bamboo-key-1' })).not.toThrow();
  });
});
