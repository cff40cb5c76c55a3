/** Okapi BM25 over small in-memory document sets (a session catalog is at most a few hundred tools). */

/** Term-frequency saturation; the standard Okapi default. */
const K1 = 1.2;
/** Length normalization; the standard Okapi default. */
const B = 0.75;

export interface Bm25Hit {
  /** Position of the document in the input array. */
  readonly index: number;
  readonly score: number;
}

/**
 * Scores every document containing at least one query term. Each distinct query term counts
 * once. Hits come back in document order; callers sort.
 */
export function scoreBm25(documents: readonly (readonly string[])[], queryTerms: readonly string[]): Bm25Hit[] {
  const terms = [...new Set(queryTerms)];
  if (terms.length === 0 || documents.length === 0) {
    return [];
  }
  const frequencies = documents.map((document) => {
    const counts = new Map<string, number>();
    for (const term of document) {
      counts.set(term, (counts.get(term) ?? 0) + 1);
    }
    return counts;
  });
  const total = documents.length;
  const averageLength = documents.reduce((sum, document) => sum + document.length, 0) / total;
  const scores = new Array<number>(total).fill(0);
  for (const term of terms) {
    const matching = frequencies.filter((counts) => counts.has(term)).length;
    if (matching === 0) {
      continue;
    }
    const idf = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
    frequencies.forEach((counts, index) => {
      const frequency = counts.get(term) ?? 0;
      if (frequency === 0) {
        return;
      }
      const lengthRatio = averageLength > 0 ? (documents[index]?.length ?? 0) / averageLength : 1;
      scores[index] = (scores[index] ?? 0) + (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + B * lengthRatio));
    });
  }
  const hits: Bm25Hit[] = [];
  scores.forEach((score, index) => {
    if (score > 0) {
      hits.push({ index, score });
    }
  });
  return hits;
}
