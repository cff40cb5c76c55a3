import { InFlightLimit } from '@codemode/fairness';

/**
 * Calls started detached from whoever took them (a queue consumer answers its job at once and
 * the call answers its caller itself), at most `max` of one tenant at once. A REST shell call may
 * wait for up to its yield window, its poll timeout or a node's answer; held by a queue consumer,
 * one tenant's waits would fill its concurrency and stall every other job of that queue (SPEC §10
 * fate isolation). Detached, they hold no consumer; this bound keeps what one tenant holds on the
 * worker (timers, answer subscriptions, pending promises) in proportion.
 */
export class TenantCallBound {
  /** Every start names its tenant's share (the tenant's quota), so no default share is needed. */
  private readonly running = new InFlightLimit({ perKey: 0 });
  private readonly inFlight = new Set<Promise<void>>();

  /** `onError` hears a call that rejects: nobody awaits a detached call. */
  constructor(private readonly onError: (error: unknown) => void) {}

  /**
   * Starts `call` unless `tenant` runs `max` calls already.
   * @returns false when refused (nothing started)
   */
  start(tenant: string, max: number, call: () => Promise<void>): boolean {
    const release = this.running.acquire(tenant, max);
    if (!release) return false;
    const settled: Promise<void> = Promise.resolve()
      .then(call)
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.inFlight.delete(settled);
        release();
      });
    this.inFlight.add(settled);
    return true;
  }

  /** Calls of `tenant` running now. */
  count(tenant: string): number {
    return this.running.held(tenant);
  }

  /** Resolves once every call started so far has settled (shutdown: no caller left unanswered). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
