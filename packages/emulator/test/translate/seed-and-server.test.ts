import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ManualClock } from '../../src/core/clock.js';
import type { Logger } from '../../src/core/logger.js';
import { seedSchema } from '../../src/core/seed.js';
import { buildTranslateApp, parseTranslateSeed, startTranslateServer, translateSeedSchema } from '../../src/translate/index.js';
import { KEYS, TEST_SEED, json, textPdf } from './support.js';

describe('translate seed block', () => {
  it('defaults every field, so the block may be omitted', () => {
    expect(translateSeedSchema.parse(undefined)).toEqual({ api_keys: [], max_file_bytes: 10 * 1024 * 1024, tokens_per_credit: 100, queue_ms: 1000, page_ms: 1000 });
    const one = translateSeedSchema.parse({ api_keys: [{ key: 'tk_demo_abcdef' }] });
    expect(one.api_keys[0]).toEqual({ key: 'tk_demo_abcdef', credits: 1000, disabled: false, account: 'default', web_usage: { translations: 0, tokens: 0, credits: 0 } });
  });

  it('is strict and names the path of a bad field', () => {
    expect(() => parseTranslateSeed({ translate: { api_keys: [{ key: 'tk_demo_abcdef', scopes: [] }] } })).toThrow(/seed translate\.api_keys\.0: .*scopes/);
    expect(() => parseTranslateSeed({ translate: { max_file_bytes: -1 } })).toThrow(/seed translate\.max_file_bytes/);
    expect(() => parseTranslateSeed({ translate: { api_keys: [{ key: 'short' }] } })).toThrow(/translate\.api_keys\.0\.key/);
    expect(() => parseTranslateSeed({ translate: { api_keys: [{ key: 'tk_demo_abcdef' }, { key: 'tk_demo_abcdef' }] } })).toThrow(/api_keys\.1\.key: duplicate key/);
  });

  it('the example seed (config/seed.example.yaml) has a valid translate block', () => {
    const example: unknown = parseYaml(readFileSync(new URL('../../../../config/seed.example.yaml', import.meta.url), 'utf8'));
    const block = parseTranslateSeed(example);
    expect(block.api_keys.map((k) => [k.name, k.disabled])).toEqual([['demo', false], ['leaked', true]]);
  });

  it('takes the whole seed or the block itself', () => {
    expect(parseTranslateSeed(TEST_SEED).api_keys).toHaveLength(5);
    expect(parseTranslateSeed(TEST_SEED.translate).api_keys).toHaveLength(5);
    expect(parseTranslateSeed({ tenants: [] }).api_keys).toEqual([]);
  });

  it('is the translate block of the one emulator seed', () => {
    const seed = seedSchema.parse({ translate: { api_keys: [{ key: KEYS.alice, credits: 5 }] } });
    expect(seed.translate.api_keys[0]?.credits).toBe(5);
    expect(seedSchema.parse({}).translate.max_file_bytes).toBe(10 * 1024 * 1024);
    expect(seedSchema.safeParse({ translate: { unknown_knob: 1 } }).success).toBe(false);
  });

  it('refuses a target language the built-in translator does not know', async () => {
    await expect(buildTranslateApp({ seed: { target_languages: ['de', 'tlh'] } })).rejects.toThrow(/seed translate\.target_languages\.1: the built-in translator does not know tlh/);
    const { app } = await buildTranslateApp({ seed: { target_languages: ['fr'], api_keys: [{ key: KEYS.alice }] } });
    const res = await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${KEYS.alice}` } });
    expect(res.json().limits.target_languages).toEqual(['fr']);
    await app.close();
  });
});

describe('startTranslateServer', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('listens on its own port and answers with its own keys; logs name keys by prefix only', async () => {
    const lines: string[] = [];
    const capture: Logger = {
      trace: (o, m) => lines.push(JSON.stringify([o, m])),
      debug: (o, m) => lines.push(JSON.stringify([o, m])),
      info: (o, m) => lines.push(JSON.stringify([o, m])),
      warn: (o, m) => lines.push(JSON.stringify([o, m])),
      error: (o, m) => lines.push(JSON.stringify([o, m])),
      child: () => capture,
    };
    const clock = new ManualClock();
    const server = await startTranslateServer({ host: '127.0.0.1', port: 0, seed: TEST_SEED, clock, logger: capture });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const auth = { authorization: `Bearer ${KEYS.alice}` };
      const form = new FormData();
      form.append('file', new Blob([await textPdf(['Hello world'])]), 'a.pdf');
      const file = await json(await fetch(`${server.url}/v1/files`, { method: 'POST', headers: auth, body: form }));
      const est = await json(await fetch(`${server.url}/v1/translation-estimates`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ file_id: file.file_id, target_language: 'es', mode: 'standard' }) }));
      const t = await json(await fetch(`${server.url}/v1/translations`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'srv' }, body: JSON.stringify({ estimate_id: est.estimate_id }) }));
      await clock.advance(2000);
      expect((await json(await fetch(`${server.url}/v1/translations/${t.translation_id}`, { headers: auth }))).status).toBe('succeeded');
      // The tenant API's paths are not here.
      expect((await fetch(`${server.url}/api/external/v1/org/members`, { headers: auth })).status).toBe(404);
    } finally {
      await server.close();
    }
    expect(lines.some((l) => l.includes('tk_alice_111'))).toBe(true);
    for (const key of Object.values(KEYS)) expect(lines.join('\n')).not.toContain(key);
  });

  it('with a database file, balances and translations survive a restart and the seed does not reset them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orgsync-translate-'));
    dirs.push(dir);
    const dbPath = join(dir, 'translate.db');
    const clock = new ManualClock();
    const seed = { translate: { queue_ms: 0, page_ms: 0, api_keys: [{ key: KEYS.alice, credits: 50 }] } };
    const first = await buildTranslateApp({ seed, clock, dbPath });
    const auth = { authorization: `Bearer ${KEYS.alice}` };
    const form = new FormData();
    form.append('file', new Blob([await textPdf(['Hello world'])]), 'a.pdf');
    await first.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(first.app.server.address() as { port: number }).port}`;
    const file = await json(await fetch(`${base}/v1/files`, { method: 'POST', headers: auth, body: form }));
    const est = (await first.app.inject({ method: 'POST', url: '/v1/translation-estimates', headers: auth, payload: { file_id: file.file_id, target_language: 'it' } })).json();
    const t = (await first.app.inject({ method: 'POST', url: '/v1/translations', headers: { ...auth, 'idempotency-key': 'persist' }, payload: { estimate_id: est.estimate_id } })).json();
    await first.app.close();

    const second = await buildTranslateApp({ seed, clock, dbPath });
    const done = (await second.app.inject({ method: 'GET', url: `/v1/translations/${t.translation_id}`, headers: auth })).json();
    expect(done.status).toBe('succeeded');
    const me = (await second.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json();
    expect(me.available_credits).toBe(50 - done.actual_credits);
    const replay = await second.app.inject({ method: 'POST', url: '/v1/translations', headers: { ...auth, 'idempotency-key': 'persist' }, payload: { estimate_id: est.estimate_id } });
    expect(replay.json().translation_id).toBe(t.translation_id);
    await second.app.close();
  });

  it('admin route recharges credits and disables keys by prefix, only with the admin token', async () => {
    const { app } = await buildTranslateApp({ seed: TEST_SEED, adminToken: 'admin-secret-token' });
    const denied = await app.inject({ method: 'POST', url: '/_emulator/translate/keys', headers: { authorization: 'Bearer wrong' }, payload: { key_prefix: 'tk_poor_3333', add_credits: 10 } });
    expect(denied.statusCode).toBe(401);
    const ok = await app.inject({ method: 'POST', url: '/_emulator/translate/keys', headers: { authorization: 'Bearer admin-secret-token' }, payload: { key_prefix: 'tk_poor_3333', add_credits: 10 } });
    expect(ok.json()).toMatchObject({ available_credits: 10, status: 'active' });
    await app.inject({ method: 'POST', url: '/_emulator/translate/keys', headers: { authorization: 'Bearer admin-secret-token' }, payload: { key_prefix: 'tk_bob_22222', disabled: true } });
    const bob = await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${KEYS.bob}` } });
    expect(bob.statusCode).toBe(403);
    expect(bob.json().error.code).toBe('api_key_disabled');
    await app.close();
    const { app: noAdmin } = await buildTranslateApp({ seed: TEST_SEED });
    expect((await noAdmin.inject({ method: 'POST', url: '/_emulator/translate/keys', payload: {} })).statusCode).toBe(404);
    await noAdmin.close();
  });
});
