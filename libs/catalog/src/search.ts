import { scoreBm25 } from './bm25';
import type { CatalogEntry } from './catalog-entry';
import { schemaPropertyNames } from './json-schema';
import { tokenize } from './tokenize';

/** Default and ceiling of `catalog.search` limits (SPEC §4, §8). */
export const DEFAULT_SEARCH_LIMIT = 8;
export const MAX_SEARCH_LIMIT = 50;

export interface SearchOptions {
  /** What the guest asked for; invalid or absent means `defaultLimit`. */
  readonly limit?: unknown;
  /** Session default (`searchDefaultLimit`, 8). */
  readonly defaultLimit?: number;
  /** Session ceiling (`maxSearchLimit`, 50); the limit is clamped to 1..maxLimit. */
  readonly maxLimit?: number;
}

/** Clamped result count for one search. */
export function resolveSearchLimit(options: SearchOptions = {}): number {
  const maxLimit = Math.max(1, Math.floor(options.maxLimit ?? MAX_SEARCH_LIMIT));
  const fallback = options.defaultLimit ?? DEFAULT_SEARCH_LIMIT;
  const requested = typeof options.limit === 'number' && Number.isFinite(options.limit) ? Math.floor(options.limit) : fallback;
  return Math.min(maxLimit, Math.max(1, Math.floor(requested)));
}

/**
 * Text indexed for one entry. Core and tenant tools (SPEC §18) add their parameter names, which
 * often carry the only word a task shares with a tool; session client and MCP schemas are
 * untrusted and never walked.
 */
export function searchDocument(entry: CatalogEntry): string[] {
  const parts = [entry.toolName, entry.label ?? '', entry.description];
  if (entry.mcpBinding) {
    parts.push(entry.mcpBinding.serverName);
  }
  if (entry.source === 'openclaw' || entry.trusted === true) {
    parts.push(...schemaPropertyNames(entry.inputSchema));
  }
  return tokenize(parts.join(' '));
}

/** 0: exact callable spelling; 1: callable name ignoring case; 2: tool name ignoring case. */
function exactTier(entry: CatalogEntry, query: string): number | undefined {
  if (entry.callableName === query) {
    return 0;
  }
  const lowered = query.toLowerCase();
  if (entry.callableName.toLowerCase() === lowered) {
    return 1;
  }
  return entry.toolName.toLowerCase() === lowered ? 2 : undefined;
}

/**
 * Ranks catalog entries for `catalog.search(query, {limit})` (SPEC §4): a query naming a tool
 * exactly wins (exact callable spelling, then case-insensitive), then BM25 score, then catalog
 * order. A non-string query, one with no usable terms that names no tool, or no match → `[]`.
 * `documents`: each entry's `searchDocument`, when the caller keeps them across searches.
 */
export function searchCatalog(
  entries: readonly CatalogEntry[],
  query: unknown,
  options: SearchOptions = {},
  documents: readonly (readonly string[])[] = entries.map(searchDocument),
): CatalogEntry[] {
  if (typeof query !== 'string') {
    return [];
  }
  const trimmed = query.trim();
  const limit = resolveSearchLimit(options);
  const hits = scoreBm25(documents, tokenize(trimmed));
  const scores = new Map(hits.map((hit) => [hit.index, hit.score]));
  const ranked: Array<{ index: number; tier: number; score: number }> = [];
  entries.forEach((entry, index) => {
    const tier = trimmed ? exactTier(entry, trimmed) : undefined;
    const score = scores.get(index);
    if (tier !== undefined || score !== undefined) {
      ranked.push({ index, tier: tier ?? 3, score: score ?? 0 });
    }
  });
  ranked.sort((left, right) => left.tier - right.tier || right.score - left.score || left.index - right.index);
  return ranked.slice(0, limit).flatMap(({ index }) => {
    const entry = entries[index];
    return entry ? [entry] : [];
  });
}
