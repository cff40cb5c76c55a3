/** `results.d.ts`: the results store and the session store as the guest sees them (SPEC §4). */
const content = `/** What results.save returns: a descriptor of at most 768 bytes; the full JSON stays stored. */
type ResultReference = {
  id: string;
  /** UTF-8 bytes of the saved JSON. */
  bytes: number;
  /** Array length, object key count, or 1 for any other value. */
  count: number;
  /** Bounded sketch of the value's shape; not a schema. */
  shape: string;
  /** JSON of a small value, or a bounded prefix/sample of a large one. */
  preview: string;
  previewTruncated: boolean;
};

/**
 * Large JSON values kept by reference in this session, across cells and waits, readable by any
 * worker, for resultsTtlSeconds (3600 by default). At most 64 references share
 * min(memoryLimitBytes, maxSnapshotBytes) bytes; a full store rejects, never evicts.
 * An oversized final object or array is saved automatically and returned as
 * {truncated: true, reference: ResultReference, guidance: string}.
 * Not available in restartSafe cells.
 */
declare const results: {
  /** Save a JSON value; returns its descriptor. Example: return await results.save(await tool({})); */
  save(value: unknown): Promise<ResultReference>;
  /** A detached copy of a saved value. Missing or expired ids reject. */
  load(id: string): Promise<unknown>;
  /** Free a reference; resolves true when it existed. Missing or expired ids reject. */
  delete(id: string): Promise<boolean>;
};

/**
 * Keep a small JSON value across cells and restarts of this session. Keys: non-empty strings of
 * at most 256 characters (else TypeError). Values: at most 256 KiB of JSON; the whole store at
 * most 1 MiB (else RangeError, store unchanged). undefined deletes; null is kept.
 * Writes commit only when the cell completes. Not available in restartSafe cells.
 */
declare function store(key: string, value: unknown): Promise<void>;
/** The stored value (a detached copy, including this cell's own writes), or undefined. */
declare function load(key: string): Promise<unknown>;
`;

export const RESULTS_API_PATH = 'results.d.ts';
export const RESULTS_API_DESCRIPTION = 'Results references for large values and the session store for small JSON values.';
export const RESULTS_API_CONTENT = content;
