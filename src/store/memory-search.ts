// Long-term memory search, the parts both backends share: the words of a query (never its syntax), and the
// order of the results (relevance, with near-ties going to the most recently updated memory).
import type { MemoryRecord } from "./store.js";

/** Enough words to find what a message is about; a pasted document does not make the query unbounded. */
const MAX_WORDS = 64;
/** Longer "words" are hashes, base64 or noise, never something a person searches for. */
const MAX_WORD_LENGTH = 100;

/**
 * The distinct words of `query` (runs of Unicode letters, digits and combining marks), in order, case-folded for
 * de-duplication only: everything else (quotes, `*`, `-`, `NEAR(`, SQL) is a separator, so a query is never
 * interpreted as search syntax. Empty when the query has no words.
 */
export function searchWords(query: string): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const [word] of query.normalize("NFC").matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    if (word.length > MAX_WORD_LENGTH) continue;
    const folded = word.toLowerCase();
    if (seen.has(folded)) continue;
    seen.add(folded);
    words.push(word);
    if (words.length === MAX_WORDS) break;
  }
  return words;
}

/**
 * An FTS5 query matching any of `words`: each one a quoted string (so `AND`, `NEAR` or `*` are plain text; a
 * word holds no `"` but it is doubled anyway), OR-ed together.
 */
export function fts5Query(words: string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"`).join(" OR ");
}

/** Candidates fetched per result wanted, so near-ties just past the limit can still move in. */
export function candidateCount(limit: number): number {
  return Math.min(limit * 3 + 10, 500);
}

/** Scores within about 5% of each other count as a tie. */
const NEAR_TIE = Math.log(1.05);

/**
 * `candidates` (score: higher is more relevant) ordered by relevance bucket, then most recently updated, then
 * newest row; the first `limit` of them. Buckets are logarithmic, so this works at any score scale (FTS5's bm25
 * can be 1e-6, ts_rank 0.1).
 */
export function byRelevanceThenRecency(candidates: Array<{ memory: MemoryRecord; score: number; seq: number }>, limit: number): MemoryRecord[] {
  const bucket = (score: number) => (score > 0 ? Math.round(Math.log(score) / NEAR_TIE) : Number.NEGATIVE_INFINITY);
  return candidates
    .map((c) => ({ ...c, bucket: bucket(c.score) }))
    .sort((a, b) => b.bucket - a.bucket || b.memory.updatedAt - a.memory.updatedAt || b.seq - a.seq)
    .slice(0, limit)
    .map((c) => c.memory);
}
