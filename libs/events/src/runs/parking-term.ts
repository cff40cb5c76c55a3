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

/**
 * A parked run has used half its term (or more, or its term is unknown). A wait that answers at
 * once without resuming the run (SPEC §18) still counts as a wait for its expiry: once half the
 * term is gone, the wait resumes the run instead, which parks it again under a fresh term, so a
 * platform that keeps waiting keeps its run as a resuming wait always did.
 */
export function termHalfSpent(parkedAt: string | null, expiresAt: string | null, now = Date.now()): boolean {
  if (parkedAt === null || expiresAt === null) return true;
  const from = Date.parse(parkedAt);
  const until = Date.parse(expiresAt);
  if (!Number.isFinite(from) || !Number.isFinite(until)) return true;
  return now - from >= (until - from) / 2;
}
