import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSLATE_ERROR_STATUS } from '../../src/translate/index.js';
import { KEYS, imageOnlyPdf, json, startHarness, textPdf, type Harness } from './support.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Asserts the status and the documented error body; returns the message. */
async function expectError(res: Response, status: number, code: string): Promise<string> {
  expect(res.status).toBe(status);
  const body = await json(res);
  expect(body).toEqual({ error: { code, message: expect.any(String) }, meta: { request_id: expect.any(String) } });
  return body.error.message;
}

async function estimateFor(pages: string[], key: string = KEYS.alice) {
  const file = await json(await h.upload(await textPdf(pages), { key }));
  return json(await h.call('POST', '/v1/translation-estimates', { key, json: { file_id: file.file_id, target_language: 'de', mode: 'standard' } }));
}

describe('translation API errors: every code of the spec with its documented status', () => {
  it('the spec codes map to the statuses the README documents', () => {
    expect(TRANSLATE_ERROR_STATUS).toMatchObject({
      invalid_api_key: 401,
      api_key_disabled: 403,
      insufficient_credits: 402,
      idempotency_key_required: 400,
      idempotency_conflict: 409,
      file_too_large: 413,
      unsupported_pdf: 422,
      ocr_required: 422,
      artifact_not_found: 404,
    });
  });

  it('invalid_api_key (401): no header, a wrong key, a tenant-API style key, another scheme', async () => {
    await expectError(await h.call('GET', '/v1/me', { key: null }), 401, 'invalid_api_key');
    await expectError(await h.call('GET', '/v1/me', { key: 'tk_alice_1111111111111112' }), 401, 'invalid_api_key');
    await expectError(await h.call('GET', '/v1/me', { key: 'ek_acme_secret' }), 401, 'invalid_api_key');
    await expectError(await h.call('GET', '/v1/usage?groupBy=overview', { key: null, headers: { authorization: `Basic ${KEYS.alice}` } }), 401, 'invalid_api_key');
    // Every endpoint checks the key, including uploads and downloads.
    await expectError(await h.upload(await textPdf(['x']), { key: 'nope-nope-nope' }), 401, 'invalid_api_key');
    await expectError(await h.call('GET', '/v1/translations/tr_x/artifacts/art_x', { key: 'nope-nope-nope' }), 401, 'invalid_api_key');
  });

  it('api_key_disabled (403) on every endpoint, naming only the key prefix', async () => {
    const msg = await expectError(await h.call('GET', '/v1/me', { key: KEYS.off }), 403, 'api_key_disabled');
    expect(msg).not.toContain(KEYS.off);
    expect(msg).toContain('tk_off_44444');
    await expectError(await h.call('POST', '/v1/translation-estimates', { key: KEYS.off, json: {} }), 403, 'api_key_disabled');
    await expectError(await h.call('GET', '/v1/usage?groupBy=overview', { key: KEYS.off }), 403, 'api_key_disabled');
  });

  it('insufficient_credits (402): can_afford is false and confirming is refused, debiting nothing', async () => {
    const est = await estimateFor(['Hello world'], KEYS.poor);
    expect(est.can_afford).toBe(false);
    expect(est.available_credits).toBe(0);
    await expectError(
      await h.call('POST', '/v1/translations', { key: KEYS.poor, json: { estimate_id: est.estimate_id }, headers: { 'idempotency-key': 'p1' } }),
      402,
      'insufficient_credits',
    );
    expect((await json(await h.call('GET', '/v1/me', { key: KEYS.poor }))).available_credits).toBe(0);
  });

  it('idempotency_key_required (400): missing or empty Idempotency-Key', async () => {
    const est = await estimateFor(['Hello world']);
    await expectError(await h.call('POST', '/v1/translations', { json: { estimate_id: est.estimate_id } }), 400, 'idempotency_key_required');
    await expectError(await h.call('POST', '/v1/translations', { json: { estimate_id: est.estimate_id }, headers: { 'idempotency-key': '  ' } }), 400, 'idempotency_key_required');
    // Checked before the body: a broken body without the header still names the header.
    await expectError(await h.call('POST', '/v1/translations', { body: '{not json', headers: { 'content-type': 'application/json' } }), 400, 'idempotency_key_required');
    // And after the key: a missing key with a wrong key is invalid_api_key.
    await expectError(await h.call('POST', '/v1/translations', { key: 'wrong-wrong-wrong', json: { estimate_id: est.estimate_id } }), 401, 'invalid_api_key');
    await expectError(await h.call('POST', '/v1/translations', { body: '{not json', headers: { 'content-type': 'application/json', 'idempotency-key': 'bad-json' } }), 400, 'invalid_request');
  });

  it('idempotency_conflict (409): the same key with a different body', async () => {
    const a = await estimateFor(['Hello world']);
    const b = await estimateFor(['Good day']);
    expect((await h.call('POST', '/v1/translations', { json: { estimate_id: a.estimate_id }, headers: { 'idempotency-key': 'c1' } })).status).toBe(201);
    await expectError(await h.call('POST', '/v1/translations', { json: { estimate_id: b.estimate_id }, headers: { 'idempotency-key': 'c1' } }), 409, 'idempotency_conflict');
  });

  it('file_too_large (413): a file over max_file_bytes', async () => {
    const big = new Uint8Array(70 * 1024).fill(0x41);
    big.set(Buffer.from('%PDF-1.7\n'));
    await expectError(await h.upload(big), 413, 'file_too_large');
    // The server is still fine after refusing a large upload.
    expect((await h.call('GET', '/v1/me')).status).toBe(200);
  });

  it('unsupported_pdf (422): bytes that are not a PDF, and a PDF that cannot be parsed', async () => {
    await expectError(await h.upload(Buffer.from('this is not a PDF at all, just garbage bytes \x00\x01\x02')), 422, 'unsupported_pdf');
    const truncated = (await textPdf(['Hello world'])).slice(0, 200);
    await expectError(await h.upload(truncated), 422, 'unsupported_pdf');
    await expectError(await h.upload(Buffer.from('%PDF-1.7\ngarbage garbage garbage\n%%EOF')), 422, 'unsupported_pdf');
  });

  it('ocr_required (422): a PDF without a text layer', async () => {
    await expectError(await h.upload(await imageOnlyPdf()), 422, 'ocr_required');
  });

  it('artifact_not_found (404): an unknown artifact id, an unknown translation, and before the job succeeded', async () => {
    const est = await estimateFor(['Hello world']);
    const t = await json(await h.call('POST', '/v1/translations', { json: { estimate_id: est.estimate_id }, headers: { 'idempotency-key': 'a1' } }));
    await expectError(await h.call('GET', `/v1/translations/${t.translation_id}/artifacts/art_unknown`), 404, 'artifact_not_found');
    await expectError(await h.call('GET', '/v1/translations/tr_unknown/artifacts/art_unknown'), 404, 'artifact_not_found');
    await h.clock.advance(60_000);
    const done = await json(await h.call('GET', `/v1/translations/${t.translation_id}`));
    expect(done.status).toBe('succeeded');
    // Another account cannot read it, even knowing both ids.
    await expectError(await h.call('GET', done.artifacts[0].download_url, { key: KEYS.other }), 404, 'artifact_not_found');
    expect((await h.call('GET', done.artifacts[0].download_url)).status).toBe(200);
  });
});

describe('translation API: request validation and unknown resources', () => {
  it('estimates check the file, the target language and the mode', async () => {
    const file = await json(await h.upload(await textPdf(['Hello world'])));
    const est = (body: unknown) => h.call('POST', '/v1/translation-estimates', { json: body });
    expect(await expectError(await est({ file_id: file.file_id, target_language: 'tlh', mode: 'standard' }), 400, 'invalid_request')).toMatch(/^target_language: must be one of de, fr/);
    expect(await expectError(await est({ file_id: file.file_id, target_language: 'de', mode: 'poetic' }), 400, 'invalid_request')).toMatch(/^mode:/);
    expect(await expectError(await est({ target_language: 'de' }), 400, 'invalid_request')).toMatch(/^file_id:/);
    await expectError(await est({ file_id: 'file_nope', target_language: 'de', mode: 'standard' }), 404, 'not_found');
    // A file of another account is not found.
    await expectError(await h.call('POST', '/v1/translation-estimates', { key: KEYS.other, json: { file_id: file.file_id, target_language: 'de' } }), 404, 'not_found');
    // Case and region subtags do not matter; the code is echoed as sent.
    const zh = await json(await est({ file_id: file.file_id, target_language: 'zh-CN', mode: 'standard' }));
    expect(zh.target_language).toBe('zh-CN');
    expect((await est({ file_id: file.file_id, target_language: 'PT-br', mode: 'fast' })).status).toBe(201);
    await expectError(await est({ file_id: file.file_id, target_language: 'x-klingon', mode: 'standard' }), 400, 'invalid_request');
    // mode defaults to standard.
    expect((await json(await est({ file_id: file.file_id, target_language: 'de' }))).mode).toBe('standard');
  });

  it('confirmation needs an estimate_id of the account', async () => {
    await expectError(await h.call('POST', '/v1/translations', { json: {}, headers: { 'idempotency-key': 'v1' } }), 400, 'invalid_request');
    await expectError(await h.call('POST', '/v1/translations', { json: { estimate_id: 'est_nope' }, headers: { 'idempotency-key': 'v2' } }), 404, 'not_found');
    // The refused key is not spent: it works once the request is right.
    const est = await estimateFor(['Hello world']);
    expect((await h.call('POST', '/v1/translations', { json: { estimate_id: est.estimate_id }, headers: { 'idempotency-key': 'v2' } })).status).toBe(201);
  });

  it('uploads need a multipart part named file', async () => {
    await expectError(await h.call('POST', '/v1/files', { json: { file: 'x' } }), 400, 'invalid_request');
    await expectError(await h.upload(await textPdf(['Hello']), { field: 'document' }), 400, 'invalid_request');
    // Other parts are ignored: the part named file is the upload.
    const form = new FormData();
    form.append('purpose', 'translation');
    form.append('cover', new Blob([Buffer.from('not a pdf')]), 'cover.txt');
    form.append('file', new Blob([await textPdf(['Hello'])], { type: 'application/pdf' }), 'real.pdf');
    const res = await h.call('POST', '/v1/files', { body: form });
    expect(res.status).toBe(201);
    expect((await json(res)).filename).toBe('real.pdf');
  });

  it('unknown translations, usage groupBy and routes', async () => {
    await expectError(await h.call('GET', '/v1/translations/tr_nope'), 404, 'not_found');
    await expectError(await h.call('GET', '/v1/translations/tr_nope/events'), 404, 'not_found');
    await expectError(await h.call('GET', '/v1/usage?groupBy=month'), 400, 'invalid_request');
    expect((await json(await h.call('GET', '/v1/usage'))).group_by).toBe('overview');
    await expectError(await h.call('GET', '/v2/me'), 404, 'not_found');
  });
});
