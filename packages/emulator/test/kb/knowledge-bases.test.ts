/**
 * Knowledge bases and documents over loopback (spec "Knowledge bases"): list, create, detail, visibility of private
 * KBs, cross-tenant 404 kb.not_found, documents list / upload (both forms) / detail, the 4 MiB limit, ingestion states.
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, appToken, drainIngestion, IDS, kbTestSeed, KEYS, sessionToken, uploadMultipart, uploadRaw } from './fixtures.js';

const MIB4 = 4 * 1024 * 1024;

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
});
afterAll(async () => emu?.close());

async function newKb(name = 'Scratch'): Promise<string> {
  const res = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body: { name } });
  expect(res.status).toBe(200);
  return res.body.data.id as string;
}

async function documentDetail(kbId: string, docId: string): Promise<Record<string, unknown>> {
  const res = await emu.request('GET', `${API}/knowledge-bases/${kbId}/documents/${docId}`, { token: KEYS.kbRead });
  expect(res.status).toBe(200);
  return res.body.data as Record<string, unknown>;
}

async function makePdf(pages: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = doc.addPage();
    page.drawText(text, { x: 50, y: 700, size: 12, font });
  }
  return doc.save();
}

describe('KB list', () => {
  it('returns tenant-level KBs only, in the envelope, with every KB field', async () => {
    const res = await emu.request('GET', `${API}/knowledge-bases`, { token: KEYS.kbRead });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, code: 200, message: expect.any(String) });
    const items = res.body.data.items as Record<string, unknown>[];
    const ids = items.map((k) => k.id);
    expect(ids).toEqual(expect.arrayContaining([IDS.handbook, IDS.policies, IDS.workspaceKb]));
    expect(ids).not.toContain(IDS.bobNotes);
    expect(ids).not.toContain(IDS.carolNotes);
    expect(ids).not.toContain(IDS.globexKb);
    for (const kb of items) expect(kb.space_kind).toBe('tenant');
    const handbook = items.find((k) => k.id === IDS.handbook)!;
    expect(handbook).toEqual({
      id: IDS.handbook,
      name: 'Handbook',
      description: 'Company handbook',
      space_kind: 'tenant',
      owner_account_id: 0,
      visibility: 'tenant',
      status: 'active',
      document_count: 3,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('does not list private KBs even to their owner', async () => {
    const jwt = await appToken(emu, 'bob@acme.test');
    const res = await emu.request('GET', `${API}/knowledge-bases`, { token: jwt });
    expect(res.status).toBe(200);
    expect(res.body.data.items.map((k: { id: string }) => k.id)).not.toContain(IDS.bobNotes);
  });
});

describe('KB create', () => {
  it('creates a tenant-level KB from name and description, forcing space_kind and visibility to tenant', async () => {
    const res = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body: { name: 'Sales', description: 'Sales playbooks' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Sales', description: 'Sales playbooks', space_kind: 'tenant', visibility: 'tenant', owner_account_id: 0, document_count: 0, status: 'active' });
    const list = await emu.request('GET', `${API}/knowledge-bases`, { token: KEYS.kbRead });
    expect(list.body.data.items.map((k: { id: string }) => k.id)).toContain(res.body.data.id);
  });

  it('defaults the description to empty', async () => {
    const res = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body: { name: 'Bare' } });
    expect(res.status).toBe(200);
    expect(res.body.data.description).toBe('');
  });

  it.each([
    ['space_kind', { name: 'X', space_kind: 'personal' }],
    ['visibility', { name: 'X', visibility: 'private' }],
  ])('refuses the property %s with 400 (only name and description are accepted)', async (field, body) => {
    const res = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 4000, error: { code: 'invalid_argument' } });
    expect(res.body.message).toContain(field);
  });

  it('refuses a missing or empty name with 400', async () => {
    for (const body of [{}, { name: '' }, { name: 42 }]) {
      const res = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^name: /);
    }
  });
});

describe('KB detail and visibility', () => {
  it('returns a tenant KB', async () => {
    const res = await emu.request('GET', `${API}/knowledge-bases/${IDS.handbook}`, { token: KEYS.kbRead });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: IDS.handbook, name: 'Handbook', document_count: 3 });
  });

  it('answers 404 kb.not_found for a KB of another tenant (detail, documents, document, retrieve)', async () => {
    for (const [method, path, body] of [
      ['GET', `${API}/knowledge-bases/${IDS.globexKb}`, undefined],
      ['GET', `${API}/knowledge-bases/${IDS.globexKb}/documents`, undefined],
      ['GET', `${API}/knowledge-bases/${IDS.globexKb}/documents/${IDS.globexDoc}`, undefined],
      ['POST', `${API}/knowledge-bases/${IDS.globexKb}/retrieve`, { query: 'refund' }],
    ] as const) {
      const res = await emu.request(method, path, { token: KEYS.all, ...(body ? { body } : {}) });
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: 4040, error: { code: 'kb.not_found' } });
    }
    const upload = await uploadRaw(emu, KEYS.all, IDS.globexKb, 'hello', { title: 'x', mime_type: 'text/plain' });
    expect(upload.status).toBe(404);
    expect(upload.body.error.code).toBe('kb.not_found');
  });

  it('answers 404 kb.not_found for an unknown or malformed KB id', async () => {
    for (const id of ['b0000000-0000-4000-8000-00000000ffff', 'not-a-uuid']) {
      const res = await emu.request('GET', `${API}/knowledge-bases/${id}`, { token: KEYS.kbRead });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('kb.not_found');
    }
  });

  it('shows a private KB to its creator only (application token of the owner)', async () => {
    const bob = await appToken(emu, 'bob@acme.test');
    const carol = await appToken(emu, 'carol@acme.test');
    const own = await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}`, { token: bob });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ id: IDS.bobNotes, space_kind: 'personal', visibility: 'private' });
    expect(own.body.data.owner_account_id).toBeGreaterThan(0);
    const docs = await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}/documents`, { token: bob });
    expect(docs.status).toBe(200);
    expect(docs.body.data.items).toHaveLength(1);
    const other = await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}/documents`, { token: carol });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('kb.not_found');
  });

  it('reports the owner as the integer account id that introspection reports for that user', async () => {
    const login = await emu.request('POST', '/_emulator/login-tokens', { token: ADMIN, body: { tenant_id: 1001, email: 'bob@acme.test' } });
    const introspected = await emu.request('POST', `${API}/auth/introspect`, { token: KEYS.introspect, body: { token: login.body.token } });
    expect(introspected.body.data.active).toBe(true);
    const bob = await appToken(emu, 'bob@acme.test');
    const kb = await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}`, { token: bob });
    expect(kb.body.data.owner_account_id).toBe(introspected.body.data.account_id);
  });

  it('hides a private KB from a tenant API key (it acts for no user)', async () => {
    const res = await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}`, { token: KEYS.all });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('kb.not_found');
  });

  it('shows a private KB to a runtime session token bound to its owner, not to one bound to another user', async () => {
    const bound = await sessionToken(emu, 'runtime_access', { accountId: IDS.bob });
    expect((await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}`, { token: bound })).status).toBe(200);
    const other = await sessionToken(emu, 'runtime_access', { accountId: IDS.carol });
    expect((await emu.request('GET', `${API}/knowledge-bases/${IDS.bobNotes}`, { token: other })).status).toBe(404);
  });
});

describe('documents', () => {
  it('lists the documents of a KB with every document field', async () => {
    const res = await emu.request('GET', `${API}/knowledge-bases/${IDS.handbook}/documents`, { token: KEYS.kbRead });
    expect(res.status).toBe(200);
    expect(res.body.data.items).toHaveLength(3);
    const refund = res.body.data.items.find((d: { id: string }) => d.id === IDS.refundDoc);
    expect(refund).toEqual({
      id: IDS.refundDoc,
      knowledge_base_id: IDS.handbook,
      title: 'Refund policy',
      mime_type: 'text/markdown',
      size_bytes: expect.any(Number),
      chunk_count: 2,
      status: 'ready',
      created_at: expect.any(String),
    });
  });

  it('returns a document by id, and 404 kb.not_found for a document of another KB or an unknown one', async () => {
    expect(await documentDetail(IDS.handbook, IDS.refundDoc)).toMatchObject({ id: IDS.refundDoc, status: 'ready' });
    for (const docId of [IDS.bobDoc, 'c0000000-0000-4000-8000-00000000ffff']) {
      const res = await emu.request('GET', `${API}/knowledge-bases/${IDS.handbook}/documents/${docId}`, { token: KEYS.kbRead });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('kb.not_found');
    }
  });

  it('uploads Form A (multipart): title defaults to the file name, mime_type to the part type; starts ingesting, becomes ready', async () => {
    const kbId = await newKb();
    const res = await uploadMultipart(emu, KEYS.kbWrite, kbId, { bytes: 'Notes about onboarding.\n\nSecond paragraph.', name: 'onboarding.txt', type: 'text/plain' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ knowledge_base_id: kbId, title: 'onboarding.txt', mime_type: 'text/plain', size_bytes: 42, chunk_count: 0, status: 'ingesting' });
    await drainIngestion(emu);
    expect(await documentDetail(kbId, res.body.data.id)).toMatchObject({ status: 'ready', chunk_count: 1 });
  });

  it('uploads Form A with explicit title and mime_type fields', async () => {
    const kbId = await newKb();
    const res = await uploadMultipart(emu, KEYS.kbWrite, kbId, { bytes: '# Heading\n\nBody', name: 'x.bin', type: 'application/octet-stream' }, { title: 'Guide', mime_type: 'text/markdown' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'Guide', mime_type: 'text/markdown', status: 'ingesting' });
  });

  it('refuses Form A without a file part, or with an unknown field', async () => {
    const kbId = await newKb();
    const form = new FormData();
    form.append('title', 'only a title');
    const noFile = await fetch(`${emu.url}${API}/knowledge-bases/${kbId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.kbWrite}` }, body: form });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { message: string }).message).toBe('file: required');
    const extra = await uploadMultipart(emu, KEYS.kbWrite, kbId, { bytes: 'x', name: 'a.txt', type: 'text/plain' }, { colour: 'blue' });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain('colour');
    const twoFiles = new FormData();
    twoFiles.append('file', new Blob(['one'], { type: 'text/plain' }), 'one.txt');
    twoFiles.append('file', new Blob(['two'], { type: 'text/plain' }), 'two.txt');
    const two = await fetch(`${emu.url}${API}/knowledge-bases/${kbId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.kbWrite}` }, body: twoFiles });
    expect(two.status).toBe(400);
    expect(((await two.json()) as { message: string }).message).toBe('file: only one file per upload');
    const misnamed = new FormData();
    misnamed.append('document', new Blob(['x'], { type: 'text/plain' }), 'x.txt');
    const wrong = await fetch(`${emu.url}${API}/knowledge-bases/${kbId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.kbWrite}` }, body: misnamed });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { message: string }).message).toBe('unknown property: document');
    const docs = await emu.request('GET', `${API}/knowledge-bases/${kbId}/documents`, { token: KEYS.kbRead });
    expect(docs.body.data.items).toEqual([]);
  });

  it('uploads Form B (raw body) with title and mime_type as query parameters', async () => {
    const kbId = await newKb();
    const res = await uploadRaw(emu, KEYS.kbWrite, kbId, 'Plain words.', { title: 'Raw doc', mime_type: 'text/plain' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'Raw doc', mime_type: 'text/plain', size_bytes: 12, status: 'ingesting' });
    await drainIngestion(emu);
    expect(await documentDetail(kbId, res.body.data.id)).toMatchObject({ status: 'ready', chunk_count: 1 });
  });

  it('takes the mime type of Form B from the body content type when the query has none', async () => {
    const kbId = await newKb();
    const res = await uploadRaw(emu, KEYS.kbWrite, kbId, '# T\n\nx', { title: 'md' }, 'text/markdown; charset=utf-8');
    expect(res.status).toBe(200);
    expect(res.body.data.mime_type).toBe('text/markdown');
  });

  it('refuses an unsupported type, an empty body, and unknown query parameters with 400', async () => {
    const kbId = await newKb();
    const html = await uploadRaw(emu, KEYS.kbWrite, kbId, '<p>x</p>', { title: 'page', mime_type: 'text/html' });
    expect(html.status).toBe(400);
    expect(html.body.message).toMatch(/^mime_type: unsupported/);
    const empty = await uploadRaw(emu, KEYS.kbWrite, kbId, '', { title: 'e', mime_type: 'text/plain' });
    expect(empty.status).toBe(400);
    const extra = await uploadRaw(emu, KEYS.kbWrite, kbId, 'x', { title: 'e', mime_type: 'text/plain', colour: 'blue' });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain('colour');
  });

  it('accepts a document of exactly 4 MiB and refuses 4 MiB + 1 byte with 400, in both forms', async () => {
    const kbId = await newKb();
    const exact = Buffer.alloc(MIB4, 'a');
    const over = Buffer.alloc(MIB4 + 1, 'a');
    expect((await uploadRaw(emu, KEYS.kbWrite, kbId, exact, { title: 'big', mime_type: 'text/plain' })).status).toBe(200);
    const raw = await uploadRaw(emu, KEYS.kbWrite, kbId, over, { title: 'big', mime_type: 'text/plain' });
    expect(raw.status).toBe(400);
    expect(raw.body.message).toMatch(/^file: larger than the 4 MiB limit/);
    expect((await uploadMultipart(emu, KEYS.kbWrite, kbId, { bytes: exact, name: 'big.txt', type: 'text/plain' })).status).toBe(200);
    const multi = await uploadMultipart(emu, KEYS.kbWrite, kbId, { bytes: over, name: 'big.txt', type: 'text/plain' });
    expect(multi.status).toBe(400);
    expect(multi.body.message).toMatch(/^file: larger than the 4 MiB limit/);
    await drainIngestion(emu);
  });

  it('shows ingesting while chunking has not run, and ready with chunk_count after it', async () => {
    const kbId = await newKb();
    expect((await emu.request('PUT', '/_emulator/kb/ingestion', { token: ADMIN, body: { paused: true } })).status).toBe(200);
    try {
      const text = Array.from({ length: 6 }, (_, i) => `Paragraph ${i} `.repeat(40)).join('\n\n');
      const res = await uploadRaw(emu, KEYS.kbWrite, kbId, text, { title: 'long', mime_type: 'text/plain' });
      expect(res.body.data.status).toBe('ingesting');
      expect(await documentDetail(kbId, res.body.data.id)).toMatchObject({ status: 'ingesting', chunk_count: 0 });
      const state = await emu.request('GET', '/_emulator/kb/ingestion', { token: ADMIN });
      expect(state.body).toEqual({ pending: 1, paused: true });
      await emu.request('PUT', '/_emulator/kb/ingestion', { token: ADMIN, body: { paused: false } });
      await drainIngestion(emu);
      const done = await documentDetail(kbId, res.body.data.id);
      expect(done.status).toBe('ready');
      expect(done.chunk_count).toBeGreaterThan(1);
    } finally {
      await emu.request('PUT', '/_emulator/kb/ingestion', { token: ADMIN, body: { paused: false } });
    }
  });

  it('marks a document failed when its content cannot be read (invalid UTF-8, a broken PDF, a PDF without text)', async () => {
    const kbId = await newKb();
    const blank = await PDFDocument.create();
    blank.addPage();
    const cases = [
      { bytes: new Uint8Array([0x66, 0x6f, 0xff, 0xfe, 0x6f]), mime: 'text/plain' },
      { bytes: new TextEncoder().encode('%PDF-1.7 this is not really a pdf'), mime: 'application/pdf' },
      { bytes: await blank.save(), mime: 'application/pdf' },
    ];
    const ids: string[] = [];
    for (const c of cases) {
      const res = await uploadRaw(emu, KEYS.kbWrite, kbId, c.bytes, { title: 'bad', mime_type: c.mime });
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe('ingesting');
      ids.push(res.body.data.id);
    }
    await drainIngestion(emu);
    for (const id of ids) expect(await documentDetail(kbId, id)).toMatchObject({ status: 'failed', chunk_count: 0 });
  });

  it('ingests a real PDF (generated with pdf-lib) and retrieves its text', async () => {
    const kbId = await newKb('PDFs');
    const pdf = await makePdf(['The warehouse in Rotterdam opens at seven.', 'Forklift training is mandatory for new staff.']);
    const res = await uploadMultipart(emu, KEYS.kbWrite, kbId, { bytes: pdf, name: 'warehouse.pdf', type: 'application/pdf' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'warehouse.pdf', mime_type: 'application/pdf', size_bytes: pdf.length, status: 'ingesting' });
    await drainIngestion(emu);
    const doc = await documentDetail(kbId, res.body.data.id);
    expect(doc).toMatchObject({ status: 'ready' });
    expect(doc.chunk_count).toBeGreaterThanOrEqual(1);
    const hit = await emu.request('POST', `${API}/knowledge-bases/${kbId}/retrieve`, { token: KEYS.kbRead, body: { query: 'forklift training' } });
    expect(hit.status).toBe(200);
    expect(hit.body.data.chunks[0].content).toContain('Forklift training is mandatory');
    expect(hit.body.data.chunks[0].document_title).toBe('warehouse.pdf');
  });

  it('infers the PDF type of a raw upload from the file header', async () => {
    const kbId = await newKb();
    const pdf = await makePdf(['Header sniffing works.']);
    const res = await uploadRaw(emu, KEYS.kbWrite, kbId, pdf, { title: 'sniffed' });
    expect(res.status).toBe(200);
    expect(res.body.data.mime_type).toBe('application/pdf');
    await drainIngestion(emu);
  });

  it('counts documents in document_count', async () => {
    const kbId = await newKb();
    await uploadRaw(emu, KEYS.kbWrite, kbId, 'one', { title: '1', mime_type: 'text/plain' });
    await uploadRaw(emu, KEYS.kbWrite, kbId, 'two', { title: '2', mime_type: 'text/plain' });
    const res = await emu.request('GET', `${API}/knowledge-bases/${kbId}`, { token: KEYS.kbRead });
    expect(res.body.data.document_count).toBe(2);
    await drainIngestion(emu);
  });
});

describe('document list limit', () => {
  it('returns at most 200 documents', async () => {
    const seed = kbTestSeed() as { tenants: { knowledge_bases: unknown[] }[] };
    seed.tenants[0]!.knowledge_bases.push({
      id: 'b0000000-0000-4000-8000-0000000000aa',
      name: 'Big',
      documents: Array.from({ length: 205 }, (_, i) => ({ title: `doc ${i}`, content: `content ${i}` })),
    });
    const big = await startTestEmulator(seed);
    try {
      const res = await big.request('GET', `${API}/knowledge-bases/b0000000-0000-4000-8000-0000000000aa/documents`, { token: KEYS.kbRead });
      expect(res.status).toBe(200);
      expect(res.body.data.items).toHaveLength(200);
      const kb = await big.request('GET', `${API}/knowledge-bases/b0000000-0000-4000-8000-0000000000aa`, { token: KEYS.kbRead });
      expect(kb.body.data.document_count).toBe(205);
    } finally {
      await big.close();
    }
  });
});
