/** Test support for the translation API: PDFs made with pdf-lib, a client over loopback, the text of a PDF. */
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';
import { extractText, getDocumentProxy } from 'unpdf';
import { ManualClock } from '../../src/core/clock.js';
import { buildTranslateApp, type TranslateApp } from '../../src/translate/index.js';

/** A PDF with a text layer: one string per page, lines split on \n. */
export async function textPdf(pages: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = doc.addPage([595, 842]);
    let y = 780;
    for (const line of text.split('\n')) {
      page.drawText(line, { x: 50, y, size: 12, font });
      y -= 16;
    }
  }
  return doc.save();
}

// A 1x1 red PNG.
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

/** A scanned-looking PDF: an image and shapes, no text layer. */
export async function imageOnlyPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const png = await doc.embedPng(PNG_1X1);
  const page = doc.addPage([595, 842]);
  page.drawImage(png, { x: 50, y: 400, width: 400, height: 300 });
  page.drawRectangle({ x: 50, y: 50, width: 200, height: 100, color: rgb(0.2, 0.2, 0.2) });
  return doc.save();
}

/** The text of each page of a PDF, as unpdf reads it. */
export async function pdfText(bytes: Uint8Array): Promise<string[]> {
  const doc = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  const { text } = await extractText(doc, { mergePages: false });
  await doc.destroy();
  return text;
}

/** Keys used by the tests (fake values, made for these tests only). */
export const KEYS = {
  alice: 'tk_alice_1111111111111111',
  bob: 'tk_bob_22222222222222222',
  poor: 'tk_poor_3333333333333333',
  off: 'tk_off_44444444444444444',
  other: 'tk_other_555555555555555',
} as const;

/** The seed block of the tests. */
export const TEST_SEED = {
  translate: {
    max_file_bytes: 64 * 1024,
    tokens_per_credit: 10,
    queue_ms: 1000,
    page_ms: 1000,
    api_keys: [
      { key: KEYS.alice, credits: 100, name: 'alice-ci', web_usage: { translations: 3, tokens: 900, credits: 9 } },
      { key: KEYS.bob, credits: 100, name: 'bob-laptop' },
      { key: KEYS.poor, credits: 0, name: 'poor' },
      { key: KEYS.off, credits: 100, disabled: true, name: 'leaked' },
      { key: KEYS.other, credits: 100, name: 'other', account: 'globex' },
    ],
  },
};

/** A started app on 127.0.0.1:0 with a ManualClock, and a small client. */
export interface Harness {
  clock: ManualClock;
  built: TranslateApp;
  base: string;
  call(method: string, path: string, opts?: { key?: string | null; json?: unknown; headers?: Record<string, string>; body?: string | FormData }): Promise<Response>;
  upload(bytes: Uint8Array, opts?: { key?: string; filename?: string; field?: string }): Promise<Response>;
  close(): Promise<void>;
}

/** Starts the translation API in-process on port 0. */
export async function startHarness(seed: unknown = TEST_SEED): Promise<Harness> {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
  const built = await buildTranslateApp({ seed, clock });
  const base = await built.app.listen({ host: '127.0.0.1', port: 0 });
  const call: Harness['call'] = (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const key = opts.key === undefined ? KEYS.alice : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    return fetch(base + path, { method, headers, ...(body === undefined ? {} : { body }) });
  };
  const upload: Harness['upload'] = (bytes, opts = {}) => {
    const form = new FormData();
    form.append(opts.field ?? 'file', new Blob([bytes], { type: 'application/pdf' }), opts.filename ?? 'doc.pdf');
    return call('POST', '/v1/files', { key: opts.key ?? KEYS.alice, body: form });
  };
  return { clock, built, base, call, upload, close: () => built.app.close() };
}

/** Reads the body as JSON (typed loosely for assertions). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(res: Response): Promise<any> {
  return res.json();
}
