import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const O = '/api/external/v1/org';
const K = TEST_KEYS.acmeRw;
const ADMIN = 'admin-secret';
let emu: TestEmulator;

beforeEach(async () => {
  emu = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
});
afterEach(async () => {
  await emu.close();
});

const adm = { token: ADMIN };

describe('admin routes', () => {
  test('without --admin-token the /_emulator routes do not exist (404)', async () => {
    const plain = await startTestEmulator(orgTestSeed());
    try {
      for (const [method, path] of [['PUT', '/_emulator/faults'], ['DELETE', '/_emulator/faults'], ['GET', '/_emulator/requests'], ['DELETE', '/_emulator/requests']] as const) {
        const res = await plain.request(method, path, { token: ADMIN, ...(method === 'PUT' ? { body: {} } : {}) });
        expect(res.status).toBe(404);
      }
    } finally {
      await plain.close();
    }
  });

  test('the admin routes need Bearer <admin token>: none or a wrong one is 401', async () => {
    expect((await emu.request('GET', '/_emulator/requests')).status).toBe(401);
    expect((await emu.request('GET', '/_emulator/requests', { token: 'wrong' })).status).toBe(401);
    expect((await emu.request('GET', '/_emulator/requests', { token: K })).status).toBe(401);
    expect((await emu.request('GET', '/_emulator/requests', adm)).status).toBe(200);
  });

  test('PUT /_emulator/faults rejects unknown fields and a bad regular expression', async () => {
    expect((await emu.request('PUT', '/_emulator/faults', { ...adm, body: { chance: 1 } })).status).toBe(400);
    expect((await emu.request('PUT', '/_emulator/faults', { ...adm, body: { paths: '(' } })).status).toBe(400);
    expect((await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 2 } })).status).toBe(400);
  });

  test('an injected fault answers the status in shape 2 and does not apply the write', async () => {
    const put = await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 1, statuses: [503], methods: ['POST'], paths: '^/api/external/v1/org/' } });
    expect(put.status).toBe(200);
    const res = await emu.request('POST', `${O}/positions`, { token: K, body: { name: 'Ghost' } });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('service_unavailable');
    // GET is not in `methods`: it passes, and shows that the POST wrote nothing.
    const list = await emu.request('GET', `${O}/positions`, { token: K });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    expect((await emu.request('DELETE', '/_emulator/faults', adm)).status).toBe(204);
    expect((await emu.request('POST', `${O}/positions`, { token: K, body: { name: 'Real' } })).status).toBe(201);
  });

  test('a 429 fault carries Retry-After', async () => {
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 1, statuses: [429] } });
    const res = await emu.request('GET', `${O}/departments`, { token: K });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('POST /_emulator/api-keys/revoke: the key is refused (401 invalid_api_key) from then on; the tenant\'s other keys work', async () => {
    expect((await emu.request('GET', `${O}/departments`, { token: K })).status).toBe(200);
    const res = await emu.request('POST', '/_emulator/api-keys/revoke', { ...adm, body: { key: K } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true });
    const refused = await emu.request('GET', `${O}/departments`, { token: K });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_api_key');
    expect((await emu.request('GET', `${O}/departments`, { token: TEST_KEYS.acmeRead })).status).toBe(200);
    expect((await emu.request('POST', '/_emulator/api-keys/revoke', { ...adm, body: { key: K } })).status).toBe(404);
    expect((await emu.request('POST', '/_emulator/api-keys/revoke', { ...adm, body: {} })).status).toBe(400);
    expect((await emu.request('POST', '/_emulator/api-keys/revoke', { token: K, body: { key: TEST_KEYS.acmeRead } })).status).toBe(401);
  });

  test('a 500 fault is internal_error', async () => {
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 1, statuses: [500] } });
    const res = await emu.request('GET', `${O}/departments`, { token: K });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('internal_error');
  });

  test('paths limits the faults to matching paths; the admin routes are never faulted', async () => {
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 1, statuses: [500], paths: '^/api/external/v1/org/members' } });
    expect((await emu.request('GET', `${O}/departments`, { token: K })).status).toBe(200);
    expect((await emu.request('GET', `${O}/members`, { token: K })).status).toBe(500);
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 1, statuses: [500] } });
    expect((await emu.request('GET', '/_emulator/requests', adm)).status).toBe(200);
  });

  test('reset_probability 1 destroys the connection without an answer, and the write is not applied', async () => {
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { reset_probability: 1, methods: ['POST'] } });
    await expect(emu.request('POST', `${O}/positions`, { token: K, body: { name: 'Ghost' } })).rejects.toThrow();
    await emu.request('DELETE', '/_emulator/faults', adm);
    expect((await emu.request('GET', `${O}/positions`, { token: K })).body.items).toEqual([]);
  });

  test('probability 0 (the default) injects nothing; latency_ms delays but answers', async () => {
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { latency_ms: [1, 5] } });
    for (let i = 0; i < 5; i++) expect((await emu.request('GET', `${O}/departments`, { token: K })).status).toBe(200);
  });

  test('GET /_emulator/requests counts by method, route template and status since start or the last DELETE, without /_emulator routes', async () => {
    await emu.request('POST', `${O}/members`, { token: K, body: { email: 'a@acme.test' } });
    const b = await emu.request('POST', `${O}/members`, { token: K, body: { email: 'b@acme.test' } });
    await emu.request('POST', `${O}/members`, { token: K, body: { email: 'b@acme.test' } });
    await emu.request('GET', `${O}/members/${b.body.account_id}`, { token: K });
    await emu.request('GET', `${O}/members/00000000-0000-4000-8000-000000000000`, { token: K });
    await emu.request('GET', `${O}/members`);
    const res = await emu.request('GET', '/_emulator/requests', adm);
    expect(res.status).toBe(200);
    const rows = res.body.requests as { method: string; route: string; status: number; count: number }[];
    expect(rows).toHaveLength(5);
    expect(rows).toEqual(expect.arrayContaining([
      { method: 'GET', route: '/api/external/v1/org/members', status: 401, count: 1 },
      { method: 'GET', route: '/api/external/v1/org/members/:account_id', status: 200, count: 1 },
      { method: 'GET', route: '/api/external/v1/org/members/:account_id', status: 404, count: 1 },
      { method: 'POST', route: '/api/external/v1/org/members', status: 201, count: 2 },
      { method: 'POST', route: '/api/external/v1/org/members', status: 409, count: 1 },
    ]));
    expect((await emu.request('DELETE', '/_emulator/requests', adm)).status).toBe(204);
    expect((await emu.request('GET', '/_emulator/requests', adm)).body).toEqual({ requests: [] });
  });

  test('injected faults are counted with their status', async () => {
    await emu.request('PUT', '/_emulator/faults', { ...adm, body: { probability: 1, statuses: [503] } });
    await emu.request('GET', `${O}/positions`, { token: K });
    const rows = (await emu.request('GET', '/_emulator/requests', adm)).body.requests;
    expect(rows).toEqual([{ method: 'GET', route: '/api/external/v1/org/positions', status: 503, count: 1 }]);
  });
});
