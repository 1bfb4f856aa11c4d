/**
 * Relevance scoring shared by KB retrieval and memory recall: BM25 turned into a similarity in [0, 1], and the
 * deterministic "rerank" pass. Pure functions; SQLite FTS5 finds the candidates, these functions score them.
 *
 * How a BM25 score becomes a similarity (README "Retrieval scores"):
 *   bm25(q, d)   = sum over distinct query terms t found in the searched corpus of
 *                  idf(t) * tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))            (k1 = 1.2, b = 0.75)
 *   idf(t)       = ln(1 + (N − df + 0.5) / (df + 0.5))   (Lucene's form: never negative, so a tiny corpus still scores)
 *   similarity   = bm25(q, d) / bm25max(q),  bm25max(q) = sum of idf(t)·(k1+1) over the same terms
 * i.e. the share of the best score any chunk could reach for this query. Query terms absent from the searched corpus are
 * left out (they cannot tell chunks apart), and so are English stopwords (text-scoring.ts STOPWORDS). A chunk that has every query term once, at average length, scores 1/(k1+1) ≈ 0.45.
 */

const K1 = 1.2;
const B = 0.75;

/** Lower-cased word tokens, diacritics removed (the same split as FTS5's `unicode61 remove_diacritics 2`). */
export function tokenize(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

/**
 * English function words left out of queries: they occur everywhere, and in a small corpus where they are the only
 * query words present they would make an unrelated question ("what is the capital of France?") look relevant.
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be been but by can could did do does for from had has have how i if in into is it its me my no not of on or ' +
    'our please should so than that the their them then there these they this to us was we were what when where which who whom why ' +
    'will with would you your').split(' '),
);

/** The distinct terms of a query, in query order, without stopwords (all of them when the query has nothing else). */
export function queryTerms(query: string): string[] {
  const all = [...new Set(tokenize(query))];
  const content = all.filter((t) => !STOPWORDS.has(t));
  return content.length > 0 ? content : all;
}

/** A scored text: its tokens in order and their frequencies. */
export interface TermDoc {
  tokens: string[];
  tf: Map<string, number>;
}

/** Builds a TermDoc from text. */
export function termDoc(text: string): TermDoc {
  const tokens = tokenize(text);
  const tf = new Map<string, number>();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  return { tokens, tf };
}

/** Statistics of the searched corpus. */
export interface CorpusStats {
  /** Number of texts (chunks, memories) searched. */
  count: number;
  /** Their average length in tokens. */
  averageLength: number;
  /** In how many texts a term occurs. */
  documentFrequency(term: string): number;
}

/** Builds CorpusStats from texts held in memory. */
export function statsOf(docs: readonly TermDoc[], totalCount = docs.length, averageLength?: number): CorpusStats {
  const df = new Map<string, number>();
  let length = 0;
  for (const d of docs) {
    length += d.tokens.length;
    for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  }
  return {
    count: totalCount,
    averageLength: averageLength ?? (docs.length === 0 ? 0 : length / docs.length),
    documentFrequency: (t) => df.get(t) ?? 0,
  };
}

/** Lucene's BM25 idf: always positive. */
export function idf(count: number, df: number): number {
  return Math.log(1 + (count - df + 0.5) / (df + 0.5));
}

function weightedTerms(terms: readonly string[], stats: CorpusStats): { term: string; idf: number }[] {
  return terms.filter((t) => stats.documentFrequency(t) > 0).map((t) => ({ term: t, idf: idf(stats.count, stats.documentFrequency(t)) }));
}

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/** BM25 of `doc` for `terms`, as a share of the best attainable score: a similarity in [0, 1]. */
export function bm25Similarity(terms: readonly string[], doc: TermDoc, stats: CorpusStats): number {
  const weighted = weightedTerms(terms, stats);
  const best = weighted.reduce((sum, w) => sum + w.idf * (K1 + 1), 0);
  if (best === 0) return 0;
  const lengthRatio = stats.averageLength > 0 ? doc.tokens.length / stats.averageLength : 1;
  let score = 0;
  for (const w of weighted) {
    const tf = doc.tf.get(w.term) ?? 0;
    if (tf === 0) continue;
    score += (w.idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + B * lengthRatio));
  }
  return clamp01(score / best);
}

/**
 * The rerank pass (rerank=true): 0.5·similarity + 0.3·coverage + 0.2·adjacency, where coverage is the idf-weighted share
 * of the query's terms the text contains and adjacency the share of consecutive query-term pairs that also stand next
 * to each other, in order, in the text (phrase evidence; equals coverage for a one-term query). It rewards chunks that
 * answer the whole query over chunks that repeat one of its words.
 */
export function rerankSimilarity(terms: readonly string[], doc: TermDoc, stats: CorpusStats, similarity: number): number {
  const weighted = weightedTerms(terms, stats);
  const total = weighted.reduce((s, w) => s + w.idf, 0);
  if (total === 0) return 0;
  const coverage = weighted.reduce((s, w) => s + ((doc.tf.get(w.term) ?? 0) > 0 ? w.idf : 0), 0) / total;
  let adjacency = coverage;
  if (weighted.length >= 2) {
    const pairs = new Set<string>();
    for (let i = 0; i + 1 < doc.tokens.length; i++) pairs.add(`${doc.tokens[i]}\u0000${doc.tokens[i + 1]}`);
    let hits = 0;
    for (let i = 0; i + 1 < weighted.length; i++) if (pairs.has(`${weighted[i]!.term}\u0000${weighted[i + 1]!.term}`)) hits += 1;
    adjacency = hits / (weighted.length - 1);
  }
  return clamp01(0.5 * similarity + 0.3 * coverage + 0.2 * adjacency);
}

/** Rounds a similarity for the wire (6 decimals keep the order of distinct scores). */
export function roundScore(x: number): number {
  return Math.round(clamp01(x) * 1e6) / 1e6;
}
