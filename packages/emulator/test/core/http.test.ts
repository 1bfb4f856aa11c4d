import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { buildEmulator } from '../../src/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const O = '/api/external/v1/org';
/** The JSON body of a response (test data, loosely typed). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (res: Response): Promise<any> => res.json();

let emu: TestEmulator;

beforeAll(async () => {
  emu = await startTestEmulator(orgTestSeed());
});
afterAll(async () => {
  await emu.close();
});

describe('HTTP errors of the core', () => {
  test('an unknown route is 404 not_found, in shape 2 under /org, never a stack trace', async () => {
    const res = await emu.request('GET', `${O}/teams`, { token: TEST_KEYS.acmeRw });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String) }, meta: { request_id: expect.any(String) } });
    const other = await emu.request('GET', '/does/not/exist');
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
    expect(JSON.stringify(other.body)).not.toMatch(/at .*\.js/);
  });

  test('invalid JSON is 400 invalid_argument', async () => {
    const res = await fetch(`${emu.url}${O}/departments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS.acmeRw}`, 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe('invalid_argument');
  });

  test('an unsupported content type is 415 in shape 2', async () => {
    const res = await fetch(`${emu.url}${O}/departments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS.acmeRw}`, 'content-type': 'application/xml' },
      body: '<name/>',
    });
    expect(res.status).toBe(415);
    const body = await json(res);
    expect(body.error.code).toEqual(expect.any(String));
    expect(body.meta.request_id).toEqual(expect.any(String));
  });

  test('a body above the limit is 413 in shape 2', async () => {
    const res = await emu.request('POST', `${O}/departments`, { token: TEST_KEYS.acmeRw, body: { name: 'x'.repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  test('a JSON array body is 400', async () => {
    const res = await emu.request('POST', `${O}/departments`, { token: TEST_KEYS.acmeRw, body: [{ name: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('body: expected a JSON object');
  });

  test('an empty JSON body on DELETE is accepted', async () => {
    const res = await fetch(`${emu.url}${O}/positions/00000000-0000-4000-8000-000000000000`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TEST_KEYS.acmeRw}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(404);
  });

  test('every answer carries a request id, the same as meta.request_id of an error, unique per request', async () => {
    const a = await emu.request('GET', `${O}/departments/nope`, { token: TEST_KEYS.acmeRw });
    const b = await emu.request('GET', `${O}/departments/nope`, { token: TEST_KEYS.acmeRw });
    expect(a.headers.get('x-request-id')).toBe(a.body.meta.request_id);
    expect(a.body.meta.request_id).not.toBe(b.body.meta.request_id);
    const ok = await emu.request('GET', `${O}/departments`, { token: TEST_KEYS.acmeRw });
    expect(ok.headers.get('x-request-id')).toMatch(/^req_/);
  });

  test('a handler crash is 500 internal_error without details', async () => {
    const built = await buildEmulator({
      seed: orgTestSeed(),
      areas: [{ name: 'boom', migrate: () => {}, routes: (app) => { app.get('/api/external/v1/org/boom', async () => { throw new Error('secret detail'); }); } }],
    });
    const res = await built.app.inject({ method: 'GET', url: '/api/external/v1/org/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'internal_error', message: 'internal error' }, meta: { request_id: expect.any(String) } });
    await built.close();
  });

  test('envelope routes answer errors in the combined shape', async () => {
    const built = await buildEmulator({
      seed: orgTestSeed(),
      areas: [{ name: 'env', migrate: () => {}, routes: (app, ctx) => { app.get('/api/external/v1/knowledge/x', { onRequest: ctx.authorize({ apiKey: 'tenant.kb.read', shape: 'envelope' }) }, async () => ({})); } }],
    });
    const res = await built.app.inject({ method: 'GET', url: '/api/external/v1/knowledge/x', headers: { authorization: `Bearer ${TEST_KEYS.acmeRw}` } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ success: false, code: 4030, error: { code: 'scope_denied' }, meta: { request_id: expect.any(String) } });
    await built.close();
  });
});

describe('restart over a --db file', () => {
  test('the seed is the truth for API keys: a key removed from the seed stops working, data stays', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'orgsync-emu-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'emu.db');
    const first = await startTestEmulator(orgTestSeed(), { dbPath });
    expect((await first.request('POST', `${O}/positions`, { token: TEST_KEYS.acmeRw, body: { name: 'Kept' } })).status).toBe(201);
    await first.close();
    const seed = orgTestSeed();
    const tenants = seed.tenants as { api_keys: { key: string }[] }[];
    tenants[0]!.api_keys = tenants[0]!.api_keys.filter((k) => k.key !== TEST_KEYS.acmeRw);
    const second = await startTestEmulator(seed, { dbPath });
    try {
      expect((await second.request('GET', `${O}/positions`, { token: TEST_KEYS.acmeRw })).status).toBe(401);
      const list = await second.request('GET', `${O}/positions`, { token: TEST_KEYS.acmeRead });
      expect(list.body.items.map((p: { name: string }) => p.name)).toEqual(['Kept']);
      expect((await second.request('GET', `${O}/departments`, { token: TEST_KEYS.acmeRead })).body.items).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
