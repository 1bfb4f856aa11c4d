/**
 * Retrieval over one or more knowledge bases: FTS5 finds the chunks that share a term with the query, text-scoring.ts
 * turns their BM25 into a similarity in [0, 1], `rerank` re-scores the best candidates, the threshold and top_k cut.
 */
import type { ChunkCandidate, KbStore } from './store.js';
import { bm25Similarity, queryTerms, rerankSimilarity, statsOf, termDoc } from './text-scoring.js';

/** Options of a retrieval. */
export interface RetrieveOptions {
  topK: number;
  /** Chunks with a similarity below it are not returned. */
  threshold: number;
  rerank: boolean;
}

/** A retrieved chunk and its similarity. */
export interface RetrievedChunk {
  chunk: ChunkCandidate;
  similarity: number;
}

/** How many BM25 candidates the rerank pass looks at. */
export function rerankPool(topK: number): number {
  return Math.max(50, topK * 5);
}

function byScore(a: RetrievedChunk, b: RetrievedChunk): number {
  return b.similarity - a.similarity || a.chunk.document_seq - b.chunk.document_seq || a.chunk.position - b.chunk.position;
}

/** Retrieves the chunks of `kbIds` most similar to `query`, best first. */
export function retrieveChunks(store: KbStore, kbIds: readonly string[], query: string, opts: RetrieveOptions): RetrievedChunk[] {
  const terms = queryTerms(query);
  if (terms.length === 0 || kbIds.length === 0) return [];
  // Quoted terms: FTS5 operators (AND, NOT, NEAR, column filters) in a query are plain words here.
  const ftsQuery = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
  const candidates = store.candidates(kbIds, ftsQuery);
  if (candidates.length === 0) return [];
  const corpus = store.corpus(kbIds);
  const docs = candidates.map((c) => termDoc(c.content));
  const stats = statsOf(docs, Math.max(corpus.count, candidates.length), corpus.average);
  let scored = candidates.map((chunk, i) => ({ chunk, doc: docs[i]!, similarity: bm25Similarity(terms, docs[i]!, stats) }));
  scored.sort(byScore);
  if (opts.rerank) {
    scored = scored.slice(0, rerankPool(opts.topK)).map((s) => ({ ...s, similarity: rerankSimilarity(terms, s.doc, stats, s.similarity) }));
    scored.sort(byScore);
  }
  return scored
    .filter((s) => s.similarity >= opts.threshold)
    .slice(0, opts.topK)
    .map((s) => ({ chunk: s.chunk, similarity: s.similarity }));
}
