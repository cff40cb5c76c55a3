import { sharedLimits } from '../core/shared-concurrency';

/**
 * The cell slots of the shard streams' readers: one budget over every shard, each shard taking
 * what `sharedLimits` allows it (what it runs plus what the budget has left, at least one). A
 * reader asks how many entries it may read (`whenFree`); each entry holds its slot until its work
 * ends or goes on without it.
 *
 * One read asks for at most the shard's share of the budget (`readCap`, at least one): every idle
 * shard's reader blocks at once, each with its count, and a burst over all shards fills them all.
 * Uncapped, that would be the whole free budget per shard, up to `shards ×` the budget held by one
 * worker while others idle; capped, idle shards take at most max(budget, shards) at once, the
 * overshoot BullMQ's one-at-a-time fetch allowed. A read names both lanes of its shard and may be
 * answered the count on each (CellStream.read), so a burst on both lanes of every shard can hand a
 * worker up to twice that; the sandbox pool's fair queue holds what its threads cannot take yet.
 * A burst on one shard reads again at once.
 */
export class ShardSlots {
  private readonly active: number[];
  private readonly waiting = new Map<number, () => void>();
  private readonly readCap: number;
  private closed = false;

  constructor(
    private readonly budget: number,
    shards: number,
  ) {
    this.active = new Array<number>(shards).fill(0);
    this.readCap = Math.max(1, Math.floor(budget / shards));
  }

  /** Slots shard `shard` may take now. */
  free(shard: number): number {
    return sharedLimits(this.budget, this.active)[shard] - this.active[shard];
  }

  /** Resolves with how many entries `shard` may read once it may take one (at most `readCap`; 0 once closed). */
  async whenFree(shard: number): Promise<number> {
    for (;;) {
      if (this.closed) return 0;
      const free = this.free(shard);
      if (free > 0) return Math.min(free, this.readCap);
      await new Promise<void>((resolve) => this.waiting.set(shard, resolve));
    }
  }

  take(shard: number): void {
    this.active[shard] += 1;
  }

  give(shard: number): void {
    this.active[shard] -= 1;
    this.wake();
  }

  /** Wakes every waiting reader for good: `whenFree` answers 0 from now on. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const resolve of waiting) resolve();
  }
}
