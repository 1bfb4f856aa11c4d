/** Organisation endpoints with real st_ session tokens from the auth area's token endpoint. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const O = '/api/external/v1/org';
let emu: TestEmulator;

function seedWithClient(limits: Record<string, number> = {}): Record<string, unknown> {
  const seed = orgTestSeed(limits);
  const tenants = seed.tenants as Record<string, unknown>[];
  tenants[0]!.oauth_clients = [{ client_id: 'rt-client', client_secret: 'rt-secret-value', kind: 'runtime', capabilities: ['org.read', 'kb.read'] }];
  return seed;
}

async function sessionToken(capabilities?: string[]): Promise<string> {
  const res = await emu.request('POST', '/api/external/v1/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: 'rt-client', client_secret: 'rt-secret-value', ...(capabilities ? { capability_bindings: capabilities } : {}) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

afterEach(async () => {
  await emu.close();
});

describe('organisation endpoints with session tokens', () => {
  beforeEach(async () => {
    emu = await startTestEmulator(seedWithClient());
  });

  test('a session token with org.read reads all three lists and a record; writes are 403 scope_denied', async () => {
    const st = await sessionToken(['org.read']);
    for (const kind of ['departments', 'members', 'positions']) {
      expect((await emu.request('GET', `${O}/${kind}`, { token: st })).status).toBe(200);
    }
    const ada = (await emu.request('GET', `${O}/members`, { token: st })).body.items[0];
    expect((await emu.request('GET', `${O}/members/${ada.account_id}`, { token: st })).status).toBe(200);
    const write = await emu.request('POST', `${O}/departments`, { token: st, body: { name: 'X' } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('scope_denied');
  });

  test('a session token without org.read is 403 scope_denied on reads', async () => {
    const st = await sessionToken(['kb.read']);
    const res = await emu.request('GET', `${O}/departments`, { token: st });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_denied');
  });

  test('an unknown st_ token is 401 invalid_session_token', async () => {
    const res = await emu.request('GET', `${O}/departments`, { token: 'st_abc_0123456789abcdef0123456789abcdef' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_session_token');
  });
});

describe('session token rate limit', () => {
  test('per session token: over limits.per_session_token is 429 with Retry-After; an API key is not affected', async () => {
    const clock = new ManualClock();
    emu = await startTestEmulator(seedWithClient({ per_session_token: 3 }), { clock });
    const st = await sessionToken(['org.read']);
    for (let i = 0; i < 3; i++) expect((await emu.request('GET', `${O}/departments`, { token: st })).status).toBe(200);
    const res = await emu.request('GET', `${O}/departments`, { token: st });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await emu.request('GET', `${O}/departments`, { token: TEST_KEYS.acmeRw })).status).toBe(200);
    const other = await sessionToken(['org.read']);
    expect((await emu.request('GET', `${O}/departments`, { token: other })).status).toBe(200);
  });
});
