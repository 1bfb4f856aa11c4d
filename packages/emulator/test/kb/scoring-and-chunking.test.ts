/**
 * Unit tests of the pure parts: tokenizing, BM25 similarity and rerank (text-scoring.ts), chunking (chunking.ts).
 */
import { describe, expect, it } from 'vitest';
import { chunkText, CHUNK_TARGET_CHARS, extractDocumentText, UnreadableDocumentError } from '../../src/kb/chunking.js';
import { bm25Similarity, idf, queryTerms, rerankSimilarity, statsOf, termDoc, tokenize } from '../../src/kb/text-scoring.js';

describe('tokenize / queryTerms', () => {
  it('lower-cases, strips diacritics and splits on non-letters', () => {
    expect(tokenize('Café-Bar: ÜBER 30 Tage!')).toEqual(['cafe', 'bar', 'uber', '30', 'tage']);
  });

  it('drops stopwords from queries unless nothing else is left', () => {
    expect(queryTerms('What is the refund policy?')).toEqual(['refund', 'policy']);
    expect(queryTerms('to be or not to be')).toEqual(['to', 'be', 'or', 'not']);
    expect(queryTerms('the the')).toEqual(['the']);
  });
});

describe('bm25Similarity', () => {
  const corpus = ['refund within thirty days', 'shipping takes five days', 'laptops use disk encryption'].map(termDoc);
  const stats = statsOf(corpus);

  it('is 0 without a shared term and in (0, 1) with one', () => {
    expect(bm25Similarity(['quantum'], corpus[0]!, stats)).toBe(0);
    const s = bm25Similarity(['refund'], corpus[0]!, stats);
    expect(s).toBeGreaterThan(0);
    expect(s).toBeLessThan(1);
  });

  it('gives a chunk with every query term once, at average length, 1/(k1+1)', () => {
    const docs = ['alpha beta', 'gamma delta'].map(termDoc);
    expect(bm25Similarity(['alpha', 'beta'], docs[0]!, statsOf(docs))).toBeCloseTo(1 / 2.2, 6);
  });

  it('ranks the chunk with the rarer matching term higher', () => {
    const days = bm25Similarity(['days', 'encryption'], corpus[1]!, stats);
    const encryption = bm25Similarity(['days', 'encryption'], corpus[2]!, stats);
    expect(encryption).toBeGreaterThan(days);
  });

  it('still scores in a one-chunk corpus (idf never negative)', () => {
    expect(idf(1, 1)).toBeGreaterThan(0);
    const one = [termDoc('the cafeteria serves lunch')];
    expect(bm25Similarity(['cafeteria', 'lunch'], one[0]!, statsOf(one))).toBeGreaterThan(0.2);
  });

  it('stays within [0, 1] for very frequent terms', () => {
    const doc = termDoc('refund '.repeat(500));
    expect(bm25Similarity(['refund'], doc, statsOf([doc, termDoc('other text')]))).toBeLessThanOrEqual(1);
  });
});

describe('rerankSimilarity', () => {
  it('prefers the chunk with every query term next to each other over one repeating a single term', () => {
    const docs = ['budget budget budget budget', 'the budget approval form', ...Array.from({ length: 8 }, () => 'the budget rules')].map(termDoc);
    const stats = statsOf(docs);
    const terms = queryTerms('budget approval');
    const plainRepeat = bm25Similarity(terms, docs[0]!, stats);
    const plainPhrase = bm25Similarity(terms, docs[1]!, stats);
    expect(rerankSimilarity(terms, docs[1]!, stats, plainPhrase)).toBeGreaterThan(rerankSimilarity(terms, docs[0]!, stats, plainRepeat));
  });

  it('is within [0, 1]', () => {
    const docs = ['a b c'].map(termDoc);
    const r = rerankSimilarity(['a', 'b', 'c'], docs[0]!, statsOf(docs), 1);
    expect(r).toBeLessThanOrEqual(1);
    expect(r).toBeGreaterThan(0);
  });
});

describe('chunkText', () => {
  it('packs short paragraphs into one chunk and splits beyond the target size', () => {
    expect(chunkText('one\n\ntwo\n\nthree', 'text/plain')).toEqual(['one\n\ntwo\n\nthree']);
    const long = Array.from({ length: 10 }, (_, i) => `Sentence number ${i} is here. `.repeat(10)).join('\n\n');
    const chunks = chunkText(long, 'text/plain');
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(CHUNK_TARGET_CHARS);
  });

  it('starts a new chunk at each Markdown heading', () => {
    expect(chunkText('# A\n\nalpha\n\n## B\n\nbeta', 'text/markdown')).toEqual(['# A\n\nalpha', '## B\n\nbeta']);
    expect(chunkText('# A\n\nalpha\n\n## B\n\nbeta', 'text/plain')).toHaveLength(1);
  });

  it('gives no chunk for whitespace, and splits a single overlong word hard', () => {
    expect(chunkText('  \n\n \r\n ', 'text/plain')).toEqual([]);
    expect(chunkText('x'.repeat(2000), 'text/plain').map((c) => c.length)).toEqual([800, 800, 400]);
  });
});

describe('extractDocumentText', () => {
  it('decodes UTF-8 and refuses invalid bytes', async () => {
    expect(await extractDocumentText(new TextEncoder().encode('héllo'), 'text/plain')).toBe('héllo');
    await expect(extractDocumentText(new Uint8Array([0xc3, 0x28]), 'text/plain')).rejects.toBeInstanceOf(UnreadableDocumentError);
  });

  it('refuses bytes that are not a PDF', async () => {
    await expect(extractDocumentText(new TextEncoder().encode('plain'), 'application/pdf')).rejects.toBeInstanceOf(UnreadableDocumentError);
  });
});
