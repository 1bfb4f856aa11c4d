/**
 * Single-KB retrieval over loopback (POST /knowledge-bases/{id}/retrieve): relevant passages rank first on a small
 * corpus, similarity in [0, 1], top_k, threshold, rerank, strict bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN, API, drainIngestion, IDS, kbTestSeed, KEYS, uploadRaw } from './fixtures.js';

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator(kbTestSeed(), { adminToken: ADMIN });
});
afterAll(async () => emu?.close());

interface Chunk {
  content: string;
  document_id: string;
  document_title: string;
  similarity: number;
}

async function retrieve(body: Record<string, unknown>, kbId: string = IDS.handbook): Promise<{ status: number; data: { knowledge_base_id: string; total: number; chunks: Chunk[] }; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await emu.request('POST', `${API}/knowledge-bases/${kbId}/retrieve`, { token: KEYS.kbRead, body });
  return { status: res.status, data: res.body.data, body: res.body };
}

describe('relevance on a small corpus', () => {
  it.each([
    ['how many days do customers have to request a refund', 'Customers can request a refund within 30 days'],
    ['the item arrived damaged, what now?', 'If an item arrives damaged'],
    ['hotel costs per night', 'Hotel costs are reimbursed up to 150 euros'],
    ['I lost my laptop', 'Report a lost laptop or phone'],
    ['disk encryption on laptops', 'full disk encryption'],
  ])('ranks the relevant passage first for "%s"', async (query, expected) => {
    const res = await retrieve({ query });
    expect(res.status).toBe(200);
    expect(res.data.total).toBeGreaterThan(0);
    expect(res.data.chunks[0]!.content).toContain(expected);
  });

  it('answers with the KB id, the number of chunks returned, and chunk fields', async () => {
    const res = await retrieve({ query: 'refund within 30 days' });
    expect(res.body).toMatchObject({ success: true, code: 200 });
    expect(res.data.knowledge_base_id).toBe(IDS.handbook);
    expect(res.data.total).toBe(res.data.chunks.length);
    expect(res.data.chunks[0]).toEqual({ content: expect.stringContaining('refund'), document_id: IDS.refundDoc, document_title: 'Refund policy', similarity: expect.any(Number) });
  });

  it('gives similarities in [0, 1], best first', async () => {
    const res = await retrieve({ query: 'laptop travel refund receipt', threshold: 0 });
    expect(res.data.chunks.length).toBeGreaterThan(2);
    const sims = res.data.chunks.map((c) => c.similarity);
    for (const s of sims) {
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
    }
    expect([...sims].sort((a, b) => b - a)).toEqual(sims);
  });

  it('searches only the given KB', async () => {
    const res = await retrieve({ query: 'parental leave' });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ knowledge_base_id: IDS.handbook, total: 0, chunks: [] });
    const policies = await retrieve({ query: 'parental leave' }, IDS.policies);
    expect(policies.data.chunks[0]!.content).toContain('Parental leave lasts sixteen weeks');
  });

  it('returns nothing for a query that shares no word with the KB', async () => {
    const res = await retrieve({ query: 'quantum chromodynamics' });
    expect(res.data).toMatchObject({ total: 0, chunks: [] });
  });

  it('returns nothing for an unrelated question that shares only common words with the KB', async () => {
    const res = await retrieve({ query: 'What is the capital of France?' });
    expect(res.data).toMatchObject({ total: 0, chunks: [] });
  });

  it('finds a document uploaded to a new KB once it is ready (a one-chunk corpus still scores above the default threshold)', async () => {
    const created = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body: { name: 'Tiny' } });
    const kbId = created.body.data.id as string;
    await uploadRaw(emu, KEYS.kbWrite, kbId, 'The cafeteria serves lunch from noon until two.', { title: 'Cafeteria', mime_type: 'text/plain' });
    await drainIngestion(emu);
    const res = await retrieve({ query: 'when is lunch served in the cafeteria' }, kbId);
    expect(res.data.total).toBe(1);
    expect(res.data.chunks[0]!.similarity).toBeGreaterThanOrEqual(0.2);
  });
});

describe('top_k', () => {
  it('defaults to 5', async () => {
    const seed = kbTestSeed() as { tenants: { knowledge_bases: unknown[] }[] };
    seed.tenants[0]!.knowledge_bases.push({
      id: 'b0000000-0000-4000-8000-0000000000bb',
      name: 'Many',
      documents: Array.from({ length: 8 }, (_, i) => ({ title: `n${i}`, content: `Invoice number ${i} is due in thirty days.` })),
    });
    const many = await startTestEmulator(seed);
    try {
      const res = await many.request('POST', `${API}/knowledge-bases/b0000000-0000-4000-8000-0000000000bb/retrieve`, { token: KEYS.kbRead, body: { query: 'invoice due' } });
      expect(res.body.data.total).toBe(5);
      const seven = await many.request('POST', `${API}/knowledge-bases/b0000000-0000-4000-8000-0000000000bb/retrieve`, { token: KEYS.kbRead, body: { query: 'invoice due', top_k: 7 } });
      expect(seven.body.data.total).toBe(7);
    } finally {
      await many.close();
    }
  });

  it('limits the number of chunks', async () => {
    const res = await retrieve({ query: 'laptop travel refund receipt', threshold: 0, top_k: 1 });
    expect(res.data.total).toBe(1);
    expect(res.data.chunks).toHaveLength(1);
  });

  it.each([0, 51, 2.5, '3', null])('refuses top_k=%s with 400', async (topK) => {
    const res = await retrieve({ query: 'refund', top_k: topK });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 4000, error: { code: 'invalid_argument' } });
    expect(res.body.message).toMatch(/^top_k: /);
  });

  it.each([1, 50])('accepts top_k=%s', async (topK) => {
    expect((await retrieve({ query: 'refund', top_k: topK })).status).toBe(200);
  });
});

describe('threshold', () => {
  it('defaults to 0.2: nothing below it is returned', async () => {
    const loose = await retrieve({ query: 'the travel portal for flights and the refund desk', threshold: 0 });
    const defaulted = await retrieve({ query: 'the travel portal for flights and the refund desk' });
    expect(loose.data.chunks.some((c) => c.similarity < 0.2)).toBe(true);
    expect(defaulted.data.chunks.every((c) => c.similarity >= 0.2)).toBe(true);
    expect(defaulted.data.total).toBe(loose.data.chunks.filter((c) => c.similarity >= 0.2).length);
  });

  it('drops every chunk below a given threshold', async () => {
    const all = await retrieve({ query: 'refund damaged laptop', threshold: 0 });
    const cut = all.data.chunks[1]!.similarity;
    const res = await retrieve({ query: 'refund damaged laptop', threshold: cut });
    expect(res.data.chunks.every((c) => c.similarity >= cut)).toBe(true);
    expect(res.data.total).toBe(all.data.chunks.filter((c) => c.similarity >= cut).length);
  });

  it.each([-0.1, 1.5, 'high'])('refuses threshold=%s with 400', async (threshold) => {
    const res = await retrieve({ query: 'refund', threshold });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^threshold: /);
  });
});

describe('rerank', () => {
  it('raises a chunk that holds the whole query as a phrase, keeping similarities in [0, 1]', async () => {
    const plain = await retrieve({ query: 'full disk encryption' });
    const reranked = await retrieve({ query: 'full disk encryption', rerank: true });
    expect(reranked.status).toBe(200);
    expect(reranked.data.chunks[0]!.content).toContain('full disk encryption');
    expect(reranked.data.chunks[0]!.similarity).toBeGreaterThan(plain.data.chunks[0]!.similarity);
    for (const c of reranked.data.chunks) expect(c.similarity).toBeLessThanOrEqual(1);
  });

  it('reorders in favour of the chunk that answers the whole query', async () => {
    const created = await emu.request('POST', `${API}/knowledge-bases`, { token: KEYS.kbWrite, body: { name: 'Rerank' } });
    const kbId = created.body.data.id as string;
    const docs = [
      'Budget budget budget budget.',
      'The approval of the travel budget needs a manager and the finance team to sign the request form before any booking happens.',
      ...Array.from({ length: 8 }, (_, i) => `Note ${i}: the travel rules apply to everyone.`),
    ];
    for (const [i, text] of docs.entries()) await uploadRaw(emu, KEYS.kbWrite, kbId, text, { title: `d${i}`, mime_type: 'text/plain' });
    await drainIngestion(emu);
    const plain = await retrieve({ query: 'budget approval', threshold: 0 }, kbId);
    const reranked = await retrieve({ query: 'budget approval', threshold: 0, rerank: true }, kbId);
    expect(plain.data.chunks[0]!.content).toBe('Budget budget budget budget.');
    expect(reranked.data.chunks[0]!.content).toContain('approval of the travel budget');
  });

  it('refuses a non-boolean rerank with 400', async () => {
    const res = await retrieve({ query: 'refund', rerank: 'yes' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^rerank: /);
  });
});

describe('request body', () => {
  it('requires a non-empty query', async () => {
    for (const body of [{}, { query: '' }, { query: 7 }]) {
      const res = await retrieve(body);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^query: /);
    }
  });

  it('refuses properties the spec does not list', async () => {
    const res = await retrieve({ query: 'refund', filter: {} });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('unknown property: filter');
  });
});
