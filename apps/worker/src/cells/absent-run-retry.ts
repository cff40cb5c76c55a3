/** The waits before a stream entry's claim is sent again while its run is absent (SPEC §13). */
const ABSENT_RUN_WAITS_MS = [10, 50, 250];

/**
 * A new cell's stream entry whose claim found no run (SPEC §13: "an entry whose request never
 * landed is dropped by the worker that reads it"). Its request was sent first in the same socket
 * write, yet it may land after the entry: on a Redis Cluster the two go to two nodes in parallel,
 * and on one Redis the request's EVALSHA misses a script cache that was emptied (a restarted or
 * failed-over Redis) and goes again as EVAL in a later write. So the claim is sent again after
 * 10, 50 and 250 ms, then the entry is dropped. Whatever the entry's age: an age would compare
 * this worker's clock with the API host's that stamped the request, and a worker whose clock ran
 * a second ahead would drop fresh entries at once. `claims`: the claims sent so far. Answers how
 * long to wait before the next claim, or null to drop the entry.
 */
export function absentRunRetryMs(claims: number): number | null {
  return ABSENT_RUN_WAITS_MS[claims - 1] ?? null;
}
