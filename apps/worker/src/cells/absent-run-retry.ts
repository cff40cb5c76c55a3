/** The waits before a stream entry's claim is sent again while its run is absent (SPEC §13). */
const ABSENT_RUN_WAITS_MS = [10, 50, 250];
/** An entry at least this old whose run is absent is dropped: its request never landed. */
export const ABSENT_RUN_WINDOW_MS = 1_000;

/**
 * A new cell's stream entry whose claim found no run (SPEC §13: "an entry whose request never
 * landed is dropped by the worker that reads it"). On one Redis its request went first on the same
 * connection as the entry, so absent is final: dropped at once. On a Redis Cluster the two went to
 * two nodes in parallel and the entry can be read before its request lands: the claim is sent
 * again after 10, 50 and 250 ms while the entry is younger than 1 s (`ageMs`, from the job's
 * `requestedAt`), then dropped. `claims`: the claims sent so far. Answers how long to wait before
 * the next claim, or null to drop the entry.
 */
export function absentRunRetryMs(opts: { cluster: boolean; ageMs: number; claims: number }): number | null {
  if (!opts.cluster || opts.ageMs >= ABSENT_RUN_WINDOW_MS) return null;
  return ABSENT_RUN_WAITS_MS[opts.claims - 1] ?? null;
}
