import { PDFDocument } from 'pdf-lib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEYS, json, pdfText, startHarness, textPdf, type Harness } from './support.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

async function uploadAndEstimate(pages: string[], target = 'de', mode = 'standard', key: string = KEYS.alice) {
  const up = await h.upload(await textPdf(pages), { key });
  expect(up.status).toBe(201);
  const file = await json(up);
  const est = await h.call('POST', '/v1/translation-estimates', { key, json: { file_id: file.file_id, target_language: target, mode } });
  expect(est.status).toBe(201);
  return { file, estimate: await json(est) };
}

describe('translation API: the whole flow as a client follows it', () => {
  it('me -> upload -> estimate -> confirm -> poll -> events -> download -> usage', async () => {
    // 1. me
    const me = await json(await h.call('GET', '/v1/me'));
    expect(me.available_credits).toBe(100);
    expect(me.api_key.prefix).toBe('tk_alice_111');
    expect(me.api_key.name).toBe('alice-ci');
    expect(me.account.account_id).toBe('default');
    expect(me.limits.target_languages).toContain('de');
    expect(JSON.stringify(me)).not.toContain(KEYS.alice);

    // 2. upload
    const pages = ['Hello world\nThe annual report of the company', 'Welcome to the department'];
    const up = await h.upload(await textPdf(pages), { filename: 'report.pdf' });
    expect(up.status).toBe(201);
    const file = await json(up);
    expect(file.file_id).toMatch(/^file_/);
    expect(file).toMatchObject({ filename: 'report.pdf', content_type: 'application/pdf', page_count: 2 });

    // 3. estimate
    const estRes = await h.call('POST', '/v1/translation-estimates', { json: { file_id: file.file_id, target_language: 'de', mode: 'standard' } });
    expect(estRes.status).toBe(201);
    const est = await json(estRes);
    expect(est.estimate_id).toMatch(/^est_/);
    expect(est.can_afford).toBe(true);
    expect(est.estimated_tokens).toBe(file.text_tokens * 2);
    expect(est.estimated_credits).toBe(Math.ceil(est.estimated_tokens / 10));

    // 4. confirm
    const conf = await h.call('POST', '/v1/translations', { json: { estimate_id: est.estimate_id }, headers: { 'idempotency-key': 'flow-1' } });
    expect(conf.status).toBe(201);
    const created = await json(conf);
    expect(created.translation_id).toMatch(/^tr_/);
    expect(created.status).toBe('queued');
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100 - est.estimated_credits);

    // 5. poll: queued -> running -> page by page -> succeeded, driven by the manual clock.
    const poll = async () => json(await h.call('GET', `/v1/translations/${created.translation_id}`));
    expect((await poll()).status).toBe('queued');
    await h.clock.advance(999);
    expect((await poll()).status).toBe('queued');
    await h.clock.advance(1);
    expect(await poll()).toMatchObject({ status: 'running', pages_done: 0, progress: 0, artifacts: [] });
    await h.clock.advance(1000);
    expect(await poll()).toMatchObject({ status: 'running', pages_done: 1, progress: 50 });
    await h.clock.advance(1000);
    const done = await poll();
    expect(done.status).toBe('succeeded');
    expect(done.error_code).toBeUndefined();
    expect(done.progress).toBe(100);
    expect(done.estimated_tokens).toBe(est.estimated_tokens);
    expect(done.estimated_credits).toBe(est.estimated_credits);
    expect(done.actual_tokens).toBeGreaterThan(0);
    expect(done.actual_credits).toBeGreaterThan(0);
    expect(done.actual_credits).toBeLessThanOrEqual(done.estimated_credits);
    expect(done.artifacts).toHaveLength(1);
    const artifact = done.artifacts[0];
    expect(artifact.download_url).toBe(`/v1/translations/${created.translation_id}/artifacts/${artifact.artifact_id}`);
    expect(artifact).toMatchObject({ content_type: 'application/pdf', filename: 'report.de.pdf' });
    expect(done.finished_at).toBe('2026-11-22T09:00:03.000Z');

    // 6. events
    const ev = await json(await h.call('GET', `/v1/translations/${created.translation_id}/events`));
    expect(ev.events.map((e: { type: string }) => e.type)).toEqual([
      'translation.queued',
      'translation.running',
      'translation.page_translated',
      'translation.page_translated',
      'translation.succeeded',
    ]);
    expect(ev.events.map((e: { sequence: number }) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(ev.events.map((e: { created_at: string }) => e.created_at)).toEqual([
      '2026-11-22T09:00:00.000Z',
      '2026-11-22T09:00:01.000Z',
      '2026-11-22T09:00:02.000Z',
      '2026-11-22T09:00:03.000Z',
      '2026-11-22T09:00:03.000Z',
    ]);
    expect(ev.events[2]).toMatchObject({ status: 'running', progress: 50, page: 1, page_count: 2 });
    const later = await json(await h.call('GET', `/v1/translations/${created.translation_id}/events?after=3`));
    expect(later.events.map((e: { sequence: number }) => e.sequence)).toEqual([4, 5]);

    // 7. download: the base address + download_url, a real PDF holding the translated text.
    const dl = await h.call('GET', artifact.download_url);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('application/pdf');
    const bytes = new Uint8Array(await dl.arrayBuffer());
    expect(bytes.length).toBe(artifact.size_bytes);
    const parsed = await PDFDocument.load(bytes);
    expect(parsed.getPageCount()).toBe(2);
    const text = await pdfText(bytes);
    expect(text[0]).toContain('Hallo Welt');
    expect(text[0]).toContain('Die jährlich Bericht von die Unternehmen');
    expect(text[1]).toContain('Willkommen to die Abteilung');

    // 8. usage: API versus web, per key; credits charged once.
    const usage = await json(await h.call('GET', '/v1/usage?groupBy=overview'));
    expect(usage.group_by).toBe('overview');
    const alice = usage.keys.find((k: { name: string }) => k.name === 'alice-ci');
    expect(alice.api).toEqual({ translations: 1, succeeded: 1, failed: 0, canceled: 0, tokens: done.actual_tokens, credits: done.actual_credits });
    expect(alice.web).toEqual({ translations: 3, tokens: 900, credits: 9 });
    expect(alice.total).toEqual({ translations: 4, tokens: 900 + done.actual_tokens, credits: 9 + done.actual_credits });
    expect(alice.current).toBe(true);
    expect(usage.totals.web).toEqual({ translations: 3, tokens: 900, credits: 9 });
    // Keys of the same account are listed, by prefix only; another account's key is not.
    expect(usage.keys.map((k: { name: string }) => k.name)).toEqual(['alice-ci', 'bob-laptop', 'poor', 'leaked']);
    expect(JSON.stringify(usage)).not.toContain(KEYS.bob);
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100 - done.actual_credits);
  });

  it('bilingual mode keeps each source line above its translation; x-pseudo changes every line', async () => {
    const { estimate } = await uploadAndEstimate(['Good morning'], 'fr', 'bilingual');
    const bi = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: estimate.estimate_id }, headers: { 'idempotency-key': 'bi' } }));
    const { estimate: pseudoEst } = await uploadAndEstimate(['Quarterly numbers'], 'x-pseudo');
    const ps = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: pseudoEst.estimate_id }, headers: { 'idempotency-key': 'ps' } }));
    await h.clock.advance(5000);
    for (const [id, expected] of [
      [bi.translation_id, ['Good morning', 'Bon matin']],
      [ps.translation_id, ['[Qúártérly númbérs]']],
    ] as const) {
      const t = await json(await h.call('GET', `/v1/translations/${id}`));
      expect(t.status).toBe('succeeded');
      const text = (await pdfText(new Uint8Array(await (await h.call('GET', t.artifacts[0].download_url)).arrayBuffer())))[0] ?? '';
      for (const line of expected) expect(text).toContain(line);
    }
  });

  it('romanised CJK targets, and modes priced fast x0.5, standard x1, quality x2', async () => {
    const page = Array.from({ length: 10 }, () => 'Hello world, the annual report of the company').join('\n');
    const prices: Record<string, number> = {};
    for (const mode of ['fast', 'standard', 'quality']) prices[mode] = (await uploadAndEstimate([page], 'ja', mode)).estimate.estimated_credits;
    expect(prices.fast).toBe(Math.ceil((prices.standard ?? 0) / 2));
    expect(prices.quality).toBe((prices.standard ?? 0) * 2);
    const { estimate } = await uploadAndEstimate(['Hello world\nThe annual report'], 'zh-CN');
    const t = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: estimate.estimate_id }, headers: { 'idempotency-key': 'zh' } }));
    await h.clock.advance(2000);
    const done = await json(await h.call('GET', `/v1/translations/${t.translation_id}`));
    expect(done).toMatchObject({ status: 'succeeded', target_language: 'zh-CN' });
    expect(done.artifacts[0].filename).toBe('doc.zh.pdf');
    const text = (await pdfText(new Uint8Array(await (await h.call('GET', done.artifacts[0].download_url)).arrayBuffer())))[0];
    expect(text).toContain('Nihao shijie');
    expect(text).toContain('The niandu baogao');
  });

  it('a PDF whose text asks for it fails with its error_code, refunds the hold and has no artifact', async () => {
    const { estimate } = await uploadAndEstimate(['Hello world', 'emulator-fail:glossary_unavailable', 'never reached']);
    const created = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: estimate.estimate_id }, headers: { 'idempotency-key': 'fail-1' } }));
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100 - estimate.estimated_credits);
    await h.clock.advance(10_000);
    const t = await json(await h.call('GET', `/v1/translations/${created.translation_id}`));
    expect(t).toMatchObject({ status: 'failed', error_code: 'glossary_unavailable', pages_done: 1, actual_tokens: 0, actual_credits: 0, artifacts: [] });
    expect(t.finished_at).toBe('2026-11-22T09:00:03.000Z');
    const ev = await json(await h.call('GET', `/v1/translations/${created.translation_id}/events`));
    expect(ev.events.at(-1)).toMatchObject({ type: 'translation.failed', status: 'failed', page: 2 });
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100);
    const alice = (await json(await h.call('GET', '/v1/usage?groupBy=overview'))).keys[0];
    expect(alice.api).toMatchObject({ translations: 1, failed: 1, succeeded: 0, credits: 0 });
  });

  it('a page with emulator-cancel ends the job canceled, with the hold returned and no error_code', async () => {
    const { estimate } = await uploadAndEstimate(['Hello world', 'emulator-cancel']);
    const created = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: estimate.estimate_id }, headers: { 'idempotency-key': 'cancel-1' } }));
    await h.clock.advance(10_000);
    const t = await json(await h.call('GET', `/v1/translations/${created.translation_id}`));
    expect(t).toMatchObject({ status: 'canceled', pages_done: 1, actual_credits: 0, artifacts: [] });
    expect(t.error_code).toBeUndefined();
    const ev = await json(await h.call('GET', `/v1/translations/${created.translation_id}/events`));
    expect(ev.events.at(-1)).toMatchObject({ type: 'translation.canceled', status: 'canceled', page: 2 });
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100);
  });

  it('plain emulator-fail fails with translation_failed', async () => {
    const { estimate } = await uploadAndEstimate(['please EMULATOR-FAIL now']);
    const created = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: estimate.estimate_id }, headers: { 'idempotency-key': 'fail-2' } }));
    await h.clock.advance(2000);
    expect(await json(await h.call('GET', `/v1/translations/${created.translation_id}`))).toMatchObject({ status: 'failed', error_code: 'translation_failed' });
  });
});

describe('translation API: idempotent confirmation and credits', () => {
  it('the same key and body is a retry: the same translation, credits debited once however often it is retried', async () => {
    const { estimate } = await uploadAndEstimate(['Hello world']);
    const confirm = (body: unknown, key = 'retry-1') => h.call('POST', '/v1/translations', { json: body, headers: { 'idempotency-key': key } });
    const first = await confirm({ estimate_id: estimate.estimate_id });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const id = (await json(first)).translation_id;
    // Sequential and concurrent retries, before and after the job runs.
    for (let i = 0; i < 3; i++) {
      const again = await confirm({ estimate_id: estimate.estimate_id });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await json(again)).translation_id).toBe(id);
    }
    const parallel = await Promise.all(Array.from({ length: 5 }, () => confirm({ estimate_id: estimate.estimate_id }).then(json)));
    expect(new Set(parallel.map((t) => t.translation_id))).toEqual(new Set([id]));
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100 - estimate.estimated_credits);
    await h.clock.advance(5000);
    const afterRun = await json(await confirm({ estimate_id: estimate.estimate_id }));
    expect(afterRun).toMatchObject({ translation_id: id, status: 'succeeded' });
    const usage = await json(await h.call('GET', '/v1/usage?groupBy=overview'));
    expect(usage.keys[0].api.translations).toBe(1);
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100 - afterRun.actual_credits);
  });

  it('the same key with another body is idempotency_conflict (409); a new key is a new translation', async () => {
    const a = await uploadAndEstimate(['Hello world']);
    const b = await uploadAndEstimate(['Good day'], 'fr');
    const send = (estimateId: string, key: string) => h.call('POST', '/v1/translations', { json: { estimate_id: estimateId }, headers: { 'idempotency-key': key } });
    expect((await send(a.estimate.estimate_id, 'k1')).status).toBe(201);
    const conflict = await send(b.estimate.estimate_id, 'k1');
    expect(conflict.status).toBe(409);
    const body = await json(conflict);
    expect(body.error.code).toBe('idempotency_conflict');
    expect(body.meta.request_id).toBeTruthy();
    const newKey = await send(b.estimate.estimate_id, 'k2');
    expect(newKey.status).toBe(201);
    expect((await json(await h.call('GET', '/v1/me'))).available_credits).toBe(100 - a.estimate.estimated_credits - b.estimate.estimated_credits);
  });

  it('key order does not make a different body', async () => {
    const { estimate } = await uploadAndEstimate(['Hello world']);
    const r1 = await h.call('POST', '/v1/translations', { body: `{"estimate_id":"${estimate.estimate_id}","note":"x"}`, headers: { 'idempotency-key': 'ord', 'content-type': 'application/json' } });
    const r2 = await h.call('POST', '/v1/translations', { body: `{"note":"x","estimate_id":"${estimate.estimate_id}"}`, headers: { 'idempotency-key': 'ord', 'content-type': 'application/json' } });
    expect((await json(r1)).translation_id).toBe((await json(r2)).translation_id);
  });

  it('idempotency keys belong to one API key: another key may use the same value', async () => {
    const a = await uploadAndEstimate(['Hello world'], 'de', 'standard', KEYS.alice);
    const b = await uploadAndEstimate(['Hello world'], 'de', 'standard', KEYS.bob);
    const ta = await json(await h.call('POST', '/v1/translations', { key: KEYS.alice, json: { estimate_id: a.estimate.estimate_id }, headers: { 'idempotency-key': 'same' } }));
    const tb = await json(await h.call('POST', '/v1/translations', { key: KEYS.bob, json: { estimate_id: b.estimate.estimate_id }, headers: { 'idempotency-key': 'same' } }));
    expect(ta.translation_id).not.toBe(tb.translation_id);
  });

  it('confirming holds credits, so a second confirmation can find them insufficient; can_afford follows the balance', async () => {
    // 100 credits, 10 tokens a credit: a long page costs more than half of the balance.
    const long = Array.from({ length: 40 }, () => 'Annual leave policy for employees').join('\n');
    const first = await uploadAndEstimate([long]);
    expect(first.estimate.estimated_credits).toBeGreaterThan(50);
    expect(first.estimate.estimated_credits).toBeLessThanOrEqual(100);
    const second = await uploadAndEstimate([long]);
    expect(second.estimate.can_afford).toBe(true);
    expect((await h.call('POST', '/v1/translations', { json: { estimate_id: first.estimate.estimate_id }, headers: { 'idempotency-key': 'h1' } })).status).toBe(201);
    const refused = await h.call('POST', '/v1/translations', { json: { estimate_id: second.estimate.estimate_id }, headers: { 'idempotency-key': 'h2' } });
    expect(refused.status).toBe(402);
    expect((await json(refused)).error.code).toBe('insufficient_credits');
    const third = await json(await h.call('POST', '/v1/translation-estimates', { json: { file_id: second.file.file_id, target_language: 'de', mode: 'standard' } }));
    expect(third.can_afford).toBe(false);
  });
});
