/** The waits before a stream entry's claim is sent again while its run is absent (SPEC §13). */
const ABSENT_RUN_WAITS_MS = [10, 50, 250];
/** An entry at least this old whose run is absent is dropped: its request never landed. */
export const ABSENT_RUN_WINDOW_MS = 1_000;

/**
 * A new cell's stream entry whose claim found no run (SPEC §13: "an entry whose request never
 * landed is dropped by the worker that reads it"). Its request was sent first in the same socket
 * write, yet it may land after the entry: on a Redis Cluster the two go to two nodes in parallel,
 * and on one Redis the request's EVALSHA misses a script cache that was emptied (a restarted or
 * failed-over Redis) and goes again as EVAL in a later write. So the claim is sent again after
 * 10, 50 and 250 ms while the entry is younger than 1 s (`ageMs`, from the job's `requestedAt`),
 * then the entry is dropped. `claims`: the claims sent so far. Answers how long to wait before the
 * next claim, or null to drop the entry.
 */
export function absentRunRetryMs(opts: { ageMs: number; claims: number }): number | null {
  if (opts.ageMs >= ABSENT_RUN_WINDOW_MS) return null;
  return ABSENT_RUN_WAITS_MS[opts.claims - 1] ?? null;
}
