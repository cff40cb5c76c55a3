import type { Settlement } from './types';

/** What wakes a waiting leg: the next settlement, a change of the run's state, or its deadline. */
export type Wakeup = Settlement | 'recheck' | 'deadline';

/**
 * Host settlements that reached a run, in arrival order, applied one at a time between pumps;
 * a leg waiting for the host sleeps here until one arrives, the run's state changes, or time runs out.
 */
export class SettlementInbox {
  private readonly queue: Settlement[] = [];
  private wake: (() => void) | undefined;

  get size(): number {
    return this.queue.length;
  }

  /** The ids of the queued settlements. */
  ids(): Set<string> {
    return new Set(this.queue.map((settlement) => settlement.id));
  }

  push(settlement: Settlement): void {
    this.queue.push(settlement);
  }

  /** Wakes a waiting leg to look at the run again. */
  recheck(): void {
    this.wake?.();
  }

  /** The next queued settlement; 'recheck' when the run's state changed (or it is aborted); 'deadline' at `until`. */
  next(until: number, aborted: boolean): Promise<Wakeup> {
    const remaining = until - performance.now();
    if (remaining <= 0) return Promise.resolve('deadline');
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (aborted) return Promise.resolve('recheck');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve('deadline');
      }, Math.ceil(remaining));
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(this.queue.shift() ?? 'recheck');
      };
    });
  }
}
