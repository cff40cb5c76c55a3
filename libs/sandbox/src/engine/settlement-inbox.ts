import type { Settlement } from './types';

/** What wakes a waiting leg: the next settlement, a change of the run's state, or its deadline. */
export type Wakeup = Settlement | 'recheck' | 'deadline';

/**
 * Host settlements that reached a run, in arrival order, applied one at a time between pumps;
 * a leg waiting for the host sleeps here until one arrives, the run's state changes, or time runs out.
 * One timer serves every wait up to the same deadline (a leg waits once per host call): it is armed
 * again only when the deadline changes, and cleared by `stop` when the leg ends.
 */
export class SettlementInbox {
  private readonly queue: Settlement[] = [];
  private wake: ((wakeup: Wakeup | undefined) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  get size(): number {
    return this.queue.length;
  }

  /** The ids of the queued settlements. */
  ids(): Set<string> {
    return new Set(this.queue.map((settlement) => settlement.id));
  }

  /** The queued settlements, in arrival order (kept). */
  queued(): Settlement[] {
    return [...this.queue];
  }

  push(settlement: Settlement): void {
    this.queue.push(settlement);
  }

  /** Wakes a waiting leg to look at the run again. */
  recheck(): void {
    this.wake?.(undefined);
  }

  /** The next queued settlement; 'recheck' when the run's state changed (or it is aborted); 'deadline' at `until`. */
  next(until: number, aborted: boolean): Promise<Wakeup> {
    const remaining = until - performance.now();
    if (remaining <= 0) return Promise.resolve('deadline');
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (aborted) return Promise.resolve('recheck');
    this.arm(until, remaining);
    return new Promise((resolve) => {
      this.wake = (wakeup) => {
        this.wake = undefined;
        resolve(wakeup ?? this.queue.shift() ?? 'recheck');
      };
    });
  }

  /** The leg ended: no wait is left to time out. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(until: number, remaining: number): void {
    if (this.timer && this.timerAt === until) return;
    clearTimeout(this.timer);
    this.timerAt = until;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake?.('deadline');
    }, Math.ceil(remaining));
  }
}
