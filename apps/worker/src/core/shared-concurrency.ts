/**
 * Concurrency limits for `active.length` consumers sharing one budget: each may run what it runs
 * now plus whatever the budget has left, and at least one (BullMQ's floor). So a worker runs up
 * to `budget` cells however they spread over the queue's shards; at the budget, each idle shard
 * may still take one job, a bounded overshoot (fewer than the shard count) that the sandbox pool
 * absorbs by queueing for a thread.
 */
export function sharedLimits(budget: number, active: readonly number[]): number[] {
  const free = Math.max(0, budget - active.reduce((sum, n) => sum + n, 0));
  return active.map((n) => Math.max(1, n + free));
}

/** Keeps BullMQ consumers' concurrency on `sharedLimits` as their jobs start and finish. */
export class SharedConcurrency {
  private readonly active: number[];
  private limits: number[];
  private listener: ((index: number, limit: number) => void) | undefined;

  constructor(
    private readonly budget: number,
    consumers: number,
  ) {
    this.active = new Array<number>(consumers).fill(0);
    this.limits = sharedLimits(budget, this.active);
  }

  limit(index: number): number {
    return this.limits[index];
  }

  /** Told of each consumer whose limit changed. */
  onChange(listener: (index: number, limit: number) => void): void {
    this.listener = listener;
  }

  /** Runs consumer `index`'s job, counting it while it runs. */
  async around<T>(index: number, job: () => Promise<T>): Promise<T> {
    this.shift(index, 1);
    try {
      return await job();
    } finally {
      this.shift(index, -1);
    }
  }

  private shift(index: number, by: number): void {
    this.active[index] += by;
    const next = sharedLimits(this.budget, this.active);
    for (let i = 0; i < next.length; i += 1) if (next[i] !== this.limits[i]) this.listener?.(i, next[i]);
    this.limits = next;
  }
}
