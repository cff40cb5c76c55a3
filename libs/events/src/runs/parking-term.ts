/**
 * The one rule for how long a parked run lives (SPEC §3 `snapshotTtlSeconds`), and with it every
 * copy of it: the `run.parked` event and run hash (`expiresAt`), the image key (expires at the same
 * instant, PEXPIREAT), the tenant's parked-run quota place and the parked-run index (scored by it),
 * and the holder's expiry timer. Each copy carries the same absolute instant, never a TTL of its
 * own worked out from another clock reading; the park instant is kept beside it rather than
 * worked back from it.
 */
export interface ParkingTerm {
  /** When the run parked (epoch ms). */
  parkedAt: number;
  /** When it expires unless a wait takes it first (epoch ms). */
  expiresAt: number;
}

/** The term of a run parking `now` under its session's `snapshotTtlSeconds`. */
export function parkingTerm(snapshotTtlSeconds: number, now = Date.now()): ParkingTerm {
  return { parkedAt: now, expiresAt: now + snapshotTtlSeconds * 1000 };
}

/** A parked run's recorded expiry (ISO time or epoch ms, null: none) has passed. */
export function pastExpiry(expiresAt: string | number | null, now = Date.now()): boolean {
  if (expiresAt === null) return false;
  return (typeof expiresAt === 'number' ? expiresAt : Date.parse(expiresAt)) <= now;
}
