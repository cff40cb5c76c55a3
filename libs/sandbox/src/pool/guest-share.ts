import type { PoolThread } from './pool-thread';

/**
 * SPEC §10: the threads whose guest time each tenant holds, so that one tenant's cells (stuck in a
 * native builtin until the watchdog, say) never take every thread from the others. A thread is
 * held by the tenant whose leg it is executing or has not yet begun, and, once terminated for a
 * tenant's overrun, by that tenant until its replacement is ready.
 */
export class GuestThreadShare {
  /** The tenant of each cell or restore in its first leg (parked and resuming runs: `tenantOfParked`). */
  private readonly legTenants = new Map<string, string>();
  /** Threads terminated for a tenant's overrun, and the replacements starting for them: theirs until ready. */
  private readonly overrunBy = new Map<PoolThread, string>();

  constructor(
    private readonly tenantOfParked: (runId: string) => string | undefined,
    /** Threads one tenant may hold; undefined: no bound. */
    private readonly share: () => number | undefined,
    /** The pool's threads. */
    private readonly total: number,
  ) {}

  legStarted(runId: string, tenant: string): void {
    this.legTenants.set(runId, tenant);
  }

  legEnded(runId: string): void {
    this.legTenants.delete(runId);
  }

  /** `thread` is being terminated because `runId` overran: its tenant holds it, and then its replacement. */
  overran(thread: PoolThread, runId: string): void {
    const tenant = this.tenantOf(runId);
    if (tenant !== undefined) this.overrunBy.set(thread, tenant);
  }

  /** `dead` is gone; returns the tenant whose overrun cost it, if any, to hold the replacement (`replacing`). */
  gone(dead: PoolThread): string | undefined {
    const culprit = this.overrunBy.get(dead);
    this.overrunBy.delete(dead);
    return culprit;
  }

  replacing(thread: PoolThread, culprit: string): void {
    this.overrunBy.set(thread, culprit);
  }

  /** A replacement became ready: it is nobody's until it runs a leg. */
  ready(thread: PoolThread): void {
    this.overrunBy.delete(thread);
  }

  /**
   * `tenant` holds fewer of `threads` than its share. Counted per thread: one whose executing or
   * not-yet-begun leg is the tenant's, and one terminated for the tenant's overrun or starting in
   * place of such a thread.
   */
  mayTake(tenant: string, threads: Iterable<PoolThread>): boolean {
    const share = this.share();
    if (share === undefined || share >= this.total) return true;
    let held = 0;
    for (const thread of threads) {
      const overrun = this.overrunBy.get(thread);
      if (overrun !== undefined ? overrun === tenant : thread.guestRunIds().some((runId) => this.tenantOf(runId) === tenant)) held += 1;
    }
    return held < share;
  }

  private tenantOf(runId: string): string | undefined {
    return this.legTenants.get(runId) ?? this.tenantOfParked(runId);
  }
}
