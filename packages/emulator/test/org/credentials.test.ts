import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Principal } from '../../src/core/types.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const O = '/api/external/v1/org';
let emu: TestEmulator;
const ids = { department: '', member: '', position: '' };

// Session and application tokens come from the auth area's resolvers; here a test resolver stands in for them
// (tokens starting "test-"), so the route rules are checked for every credential kind.
const testPrincipals: Record<string, Principal> = {
  'test-st-org-read': { kind: 'session_token', tenantId: 1001, scopes: new Set(['tenant.org.read']), credentialId: 'st1', grant: 'client_credentials' },
  'test-st-org-write': { kind: 'session_token', tenantId: 1001, scopes: new Set(['tenant.org.write', 'tenant.kb.read']), credentialId: 'st2', grant: 'client_credentials' },
  'test-app-contacts': { kind: 'app_token', tenantId: 1001, scopes: new Set(['contacts.read']), credentialId: 'app1', accountId: 'x' },
  'test-app-kb': { kind: 'app_token', tenantId: 1001, scopes: new Set(['kb.read']), credentialId: 'app2', accountId: 'x' },
};

beforeAll(async () => {
  emu = await startTestEmulator(orgTestSeed());
  emu.ctx.credentials.add({
    matches: (t) => t.startsWith('test-'),
    resolve: (t) => testPrincipals[t] ?? { error: 'invalid_session_token' },
  });
  const K = TEST_KEYS.acmeRw;
  ids.department = (await emu.request('POST', `${O}/departments`, { token: K, body: { name: 'Eng' } })).body.id;
  ids.position = (await emu.request('POST', `${O}/positions`, { token: K, body: { name: 'Dev' } })).body.id;
  ids.member = (await emu.request('POST', `${O}/members`, { token: K, body: { email: 'm@acme.test' } })).body.account_id;
});
afterAll(async () => {
  await emu.close();
});

interface Endpoint {
  method: string;
  path: () => string;
  body?: () => unknown;
  write: boolean;
}
const endpoints: Endpoint[] = [
  { method: 'GET', path: () => `${O}/departments`, write: false },
  { method: 'POST', path: () => `${O}/departments`, body: () => ({ name: `X${Math.random()}` }), write: true },
  { method: 'GET', path: () => `${O}/departments/${ids.department}`, write: false },
  { method: 'PATCH', path: () => `${O}/departments/${ids.department}`, body: () => ({ sort_order: 1 }), write: true },
  { method: 'DELETE', path: () => `${O}/departments/00000000-0000-4000-8000-000000000000`, write: true },
  { method: 'GET', path: () => `${O}/members`, write: false },
  { method: 'POST', path: () => `${O}/members`, body: () => ({ email: `x${Math.random()}@acme.test` }), write: true },
  { method: 'GET', path: () => `${O}/members/${ids.member}`, write: false },
  { method: 'PATCH', path: () => `${O}/members/${ids.member}`, body: () => ({ title: 'T' }), write: true },
  { method: 'DELETE', path: () => `${O}/members/00000000-0000-4000-8000-000000000000`, write: true },
  { method: 'GET', path: () => `${O}/positions`, write: false },
  { method: 'POST', path: () => `${O}/positions`, body: () => ({ name: 'P' }), write: true },
  { method: 'GET', path: () => `${O}/positions/${ids.position}`, write: false },
  { method: 'PATCH', path: () => `${O}/positions/${ids.position}`, body: () => ({ sort_order: 2 }), write: true },
  { method: 'DELETE', path: () => `${O}/positions/00000000-0000-4000-8000-000000000000`, write: true },
];

type Expectation = 'ok' | 401 | 403;
/** credential -> [expected on reads, expected on writes] */
const matrix: [string, string | undefined, Expectation, Expectation, string?][] = [
  ['no credential', undefined, 401, 401, 'invalid_api_key'],
  ['unknown ek_ key', 'ek_acme_ffffffffffffffff', 401, 401, 'invalid_api_key'],
  ['malformed ek_ key', 'ek_nounderscore', 401, 401, 'invalid_api_key'],
  ['ek_ read+write', TEST_KEYS.acmeRw, 'ok', 'ok'],
  ['ek_ read only', TEST_KEYS.acmeRead, 'ok', 403],
  ['ek_ write only', TEST_KEYS.acmeWrite, 403, 'ok'],
  ['ek_ without org scopes', TEST_KEYS.acmeNone, 403, 403],
  ['session token with tenant.org.read', 'test-st-org-read', 'ok', 403],
  ['session token with tenant.org.write (writes take only ek_)', 'test-st-org-write', 403, 403],
  ['unknown session token', 'test-st-bogus', 401, 401, 'invalid_session_token'],
  ['application token with contacts.read', 'test-app-contacts', 'ok', 403],
  ['application token with kb.read only', 'test-app-kb', 403, 403],
];

describe('credential and scope matrix over the 15 organisation endpoints', () => {
  for (const [name, token, onRead, onWrite, code401] of matrix) {
    for (const ep of endpoints) {
      const expected = ep.write ? onWrite : onRead;
      test(`${name}: ${ep.method} ${ep.path().replace(/[0-9a-f-]{36}/, ':id')} -> ${expected}`, async () => {
        const res = await emu.request(ep.method, ep.path(), { ...(token ? { token } : {}), ...(ep.body ? { body: ep.body() } : {}) });
        if (expected === 'ok') {
          expect([200, 201, 204, 404]).toContain(res.status);
          if (ep.method === 'GET') expect(res.status).toBe(200);
        } else {
          expect(res.status).toBe(expected);
          expect(res.body.error.code).toBe(expected === 403 ? 'scope_denied' : code401);
          expect(res.body.meta.request_id).toEqual(expect.any(String));
        }
      });
    }
  }

  test('the Authorization scheme is Bearer (case-insensitive); another scheme is 401', async () => {
    const lower = await emu.request('GET', `${O}/departments`, { headers: { authorization: `bearer ${TEST_KEYS.acmeRw}` } });
    expect(lower.status).toBe(200);
    const basic = await emu.request('GET', `${O}/departments`, { headers: { authorization: `Basic ${TEST_KEYS.acmeRw}` } });
    expect(basic.status).toBe(401);
  });

  test('keys are stored hashed: the database holds no key value', () => {
    const rows = emu.ctx.db.prepare('SELECT * FROM emu_api_keys').all() as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(0);
    const dump = JSON.stringify(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('latin1') : v]))));
    for (const key of Object.values(TEST_KEYS)) expect(dump).not.toContain(key);
  });
});

describe('tenant isolation', () => {
  test("another tenant's records are 404 by id for reads and writes, and absent from its lists", async () => {
    const G = TEST_KEYS.globexRw;
    for (const [kind, id] of [['departments', ids.department], ['members', ids.member], ['positions', ids.position]] as const) {
      expect((await emu.request('GET', `${O}/${kind}/${id}`, { token: G })).status).toBe(404);
      const patch = await emu.request('PATCH', `${O}/${kind}/${id}`, { token: G, body: kind === 'members' ? { title: 'x' } : { sort_order: 9 } });
      expect(patch.status).toBe(404);
      expect(patch.body.error.code).toBe('not_found');
      expect((await emu.request('DELETE', `${O}/${kind}/${id}`, { token: G })).status).toBe(404);
      const list = await emu.request('GET', `${O}/${kind}?limit=200&updated_since=2000-01-01T00:00:00Z`, { token: G });
      expect(JSON.stringify(list.body)).not.toContain(id);
    }
    const globexRoot = (await emu.request('GET', `${O}/departments`, { token: G })).body.items;
    expect(globexRoot).toEqual([expect.objectContaining({ name: 'Globex', path: '/Globex', depth: 0 })]);
  });

  test("a department of another tenant cannot be used as parent or member department", async () => {
    const G = TEST_KEYS.globexRw;
    expect((await emu.request('POST', `${O}/departments`, { token: G, body: { name: 'X', parent_id: ids.department } })).status).toBe(400);
    expect((await emu.request('POST', `${O}/members`, { token: G, body: { email: 'g@globex.test', department_id: ids.department } })).status).toBe(400);
  });

  test('third ids are unique per tenant, not across tenants', async () => {
    expect((await emu.request('POST', `${O}/positions`, { token: TEST_KEYS.acmeRw, body: { name: 'A', third_position_id: 'SAME' } })).status).toBe(201);
    expect((await emu.request('POST', `${O}/positions`, { token: TEST_KEYS.globexRw, body: { name: 'A', third_position_id: 'SAME' } })).status).toBe(201);
  });
});
