/**
 * The credential matrix on the organisation endpoints: ek_ keys, st_ session tokens with and without org.read, and
 * application JWTs with contacts.read (reads only) or kb.read (no organisation access); bad, expired and unlisted-key
 * JWTs are 401 invalid_session_token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { ADA_ACCOUNT, appTokens, BOB_ACCOUNT, CLIENTS, KEYS, sessionToken, startAuthEmulator, type AuthEmulator } from './support.js';

const ORG = '/api/external/v1/org';

describe('credential matrix on the organisation endpoints', () => {
  let emu: AuthEmulator;
  let stOrg: string;
  let stNoOrg: string;
  let stRuntime: string;
  let jwtContacts: string;
  let jwtKbOnly: string;
  let idToken: string;
  let departmentId: string;
  let positionId: string;

  beforeAll(async () => {
    emu = await startAuthEmulator();
    stOrg = await sessionToken(emu);
    stNoOrg = await sessionToken(emu, CLIENTS.runtimeKbOnly);
    const runtime = await emu.json('POST', '/api/external/v1/oauth/token', {
      body: { grant_type: 'runtime_access', client_id: CLIENTS.runtime.id, client_secret: CLIENTS.runtime.secret, tenant_id: 1001 },
    });
    stRuntime = runtime.body.access_token;
    const tokens = (await appTokens(emu, { scope: 'openid contacts.read' })).body;
    jwtContacts = tokens.access_token;
    idToken = tokens.id_token;
    jwtKbOnly = (await appTokens(emu, { scope: 'openid kb.read' })).body.access_token;
    const dept = await emu.json('POST', `${ORG}/departments`, { token: KEYS.acmeOrgRw, body: { name: 'Engineering' } });
    departmentId = dept.body.id;
    const pos = await emu.json('POST', `${ORG}/positions`, { token: KEYS.acmeOrgRw, body: { name: 'Engineer' } });
    positionId = pos.body.id;
  });
  afterAll(async () => {
    await emu.close();
  });

  const reads = () => [
    `${ORG}/departments`,
    `${ORG}/departments/${departmentId}`,
    `${ORG}/members`,
    `${ORG}/members/${BOB_ACCOUNT}`,
    `${ORG}/positions`,
    `${ORG}/positions/${positionId}`,
  ];
  const writes = () => [
    { method: 'POST', path: `${ORG}/departments`, body: { name: 'Sales' } },
    { method: 'PATCH', path: `${ORG}/departments/${departmentId}`, body: { name: 'Eng' } },
    { method: 'DELETE', path: `${ORG}/departments/${departmentId}` },
    { method: 'POST', path: `${ORG}/members`, body: { display_name: 'Carl', email: 'carl@acme.test' } },
    { method: 'PATCH', path: `${ORG}/members/${BOB_ACCOUNT}`, body: { title: 'Boss' } },
    { method: 'DELETE', path: `${ORG}/members/${BOB_ACCOUNT}` },
    { method: 'POST', path: `${ORG}/positions`, body: { name: 'Lead' } },
    { method: 'PATCH', path: `${ORG}/positions/${positionId}`, body: { name: 'Senior' } },
    { method: 'DELETE', path: `${ORG}/positions/${positionId}` },
  ];

  it('st_ with org.read (client_credentials or runtime_access) reads every organisation endpoint', async () => {
    for (const token of [stOrg, stRuntime]) {
      for (const path of reads()) {
        const res = await emu.json('GET', path, { token });
        expect(res.status, path).toBe(200);
      }
    }
  });

  it('st_ without org.read cannot read: 403 scope_denied', async () => {
    for (const path of reads()) {
      const res = await emu.json('GET', path, { token: stNoOrg });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('scope_denied');
    }
  });

  it('application JWT with contacts.read reads every organisation endpoint', async () => {
    for (const path of reads()) {
      const res = await emu.json('GET', path, { token: jwtContacts });
      expect(res.status, path).toBe(200);
    }
  });

  it('application JWT with kb.read only cannot read the organisation: 403', async () => {
    for (const path of reads()) {
      expect((await emu.json('GET', path, { token: jwtKbOnly })).status, path).toBe(403);
    }
  });

  it('no session token or application JWT can write the organisation (403 scope_denied); the ek_ key can', async () => {
    for (const token of [stOrg, stRuntime, jwtContacts]) {
      for (const w of writes()) {
        const res = await emu.json(w.method, w.path, { token, ...(w.body ? { body: w.body } : {}) });
        expect(res.status, `${w.method} ${w.path}`).toBe(403);
        expect(res.body.error.code).toBe('scope_denied');
      }
    }
    const created = await emu.json('POST', `${ORG}/departments`, { token: KEYS.acmeOrgRw, body: { name: 'Sales' } });
    expect(created.status).toBe(201);
  });

  it('on the knowledge side it is the other way round: kb.read lists KBs, contacts.read does not', async () => {
    expect((await emu.json('GET', '/api/external/v1/knowledge-bases', { token: jwtKbOnly })).status).toBe(200);
    expect((await emu.json('GET', '/api/external/v1/knowledge-bases', { token: jwtContacts })).status).toBe(403);
    expect((await emu.json('POST', '/api/external/v1/knowledge-bases', { token: jwtKbOnly, body: { name: 'x' } })).status).toBe(403);
    expect((await emu.json('GET', '/api/external/v1/knowledge-bases', { token: stNoOrg })).status).toBe(200);
  });

  it('the ID token is not an access token: 401 invalid_session_token', async () => {
    const res = await emu.json('GET', `${ORG}/departments`, { token: idToken });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_session_token');
  });

  it('a tampered or foreign-signed JWT is 401 invalid_session_token', async () => {
    const [h, p, s] = jwtContacts.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, tenant_id: 2002 })).toString('base64url');
    for (const token of [`${h}.${forgedPayload}.${s}`, `${h}.${p}.${s.slice(0, -4)}AAAA`]) {
      const res = await emu.json('GET', `${ORG}/departments`, { token });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_session_token');
    }
  });

  it('an application JWT sees only its own tenant', async () => {
    const globex = await appTokens(emu, { tenantId: 2002, client: CLIENTS.globexH5.id, email: 'gina@globex.test', redirectUri: 'https://app.globex.test/cb', scope: 'openid contacts.read' });
    expect(globex.status).toBe(200);
    const token = globex.body.access_token as string;
    expect((await emu.json('GET', `${ORG}/members/${BOB_ACCOUNT}`, { token })).status).toBe(404);
    expect((await emu.json('GET', `${ORG}/departments/${departmentId}`, { token })).status).toBe(404);
    const members = await emu.json('GET', `${ORG}/members`, { token });
    expect(members.body.items.map((m: { email: string }) => m.email)).toEqual(['gina@globex.test']);
    expect((await emu.json('GET', `${ORG}/members/${ADA_ACCOUNT}`, { token: jwtContacts })).status).toBe(200);
  });
});

describe('application JWT lifetime and keys', () => {
  it('expires with the clock: 401 invalid_session_token after expires_in', async () => {
    const clock = new ManualClock(Date.now());
    const emu = await startAuthEmulator({ clock });
    try {
      const tokens = (await appTokens(emu, { scope: 'openid contacts.read' })).body;
      await clock.advance(3_599_000);
      expect((await emu.json('GET', `${ORG}/departments`, { token: tokens.access_token })).status).toBe(200);
      await clock.advance(1_000);
      const res = await emu.json('GET', `${ORG}/departments`, { token: tokens.access_token });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_session_token');
    } finally {
      await emu.close();
    }
  });

  it('keeps working while its key is retiring and stops once the key leaves the set', async () => {
    const emu = await startAuthEmulator();
    try {
      const token = (await appTokens(emu, { scope: 'openid contacts.read' })).body.access_token;
      const rotated = await emu.admin('POST', '/_emulator/keys/rotate');
      const retiringKid = rotated.body.keys[1].kid as string;
      expect((await emu.json('GET', `${ORG}/departments`, { token })).status).toBe(200);
      expect((await emu.admin('DELETE', `/_emulator/keys/${retiringKid}`)).status).toBe(200);
      const res = await emu.json('GET', `${ORG}/departments`, { token });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_session_token');
      // A token signed after the rotation verifies.
      const fresh = (await appTokens(emu, { scope: 'openid contacts.read' })).body.access_token;
      expect((await emu.json('GET', `${ORG}/departments`, { token: fresh })).status).toBe(200);
    } finally {
      await emu.close();
    }
  });
});

describe('revocation through the admin route', () => {
  it('revokes session tokens, access JWTs and refresh tokens: 401 invalid_session_token / invalid_grant afterwards', async () => {
    const emu = await startAuthEmulator();
    try {
      const st = await sessionToken(emu);
      const tokens = (await appTokens(emu, { scope: 'openid contacts.read' })).body;
      for (const [token, kind] of [[st, 'session_token'], [tokens.access_token, 'access_token'], [tokens.refresh_token, 'refresh_token']] as const) {
        const res = await emu.admin('POST', '/_emulator/login-tokens/revoke', { token });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ revoked: true, kind });
      }
      for (const token of [st, tokens.access_token]) {
        const res = await emu.json('GET', `${ORG}/departments`, { token });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('invalid_session_token');
      }
      const refreshed = await emu.form('/api/external/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: CLIENTS.h5.id, client_secret: CLIENTS.h5.secret });
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.message).toContain('invalid_grant');
      expect((await emu.admin('POST', '/_emulator/login-tokens/revoke', { token: 'st_nothing_here' })).status).toBe(404);
    } finally {
      await emu.close();
    }
  });
});
