/** How many deliveries may be in flight: per key (a tenant) and in all. */
export interface InFlightBounds {
  readonly perKey: number;
  readonly total: number;
}

/**
 * Counts work in flight per key and in all, and refuses more past either bound (SPEC §10 fate
 * isolation): one tenant's slow or failing receiver holds at most `perKey` slots, and the worker
 * never holds more than `total`, instead of queueing without bound.
 */
export class InFlightLimit {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly bounds: InFlightBounds) {}

  /** A release function for one slot of `key`, or null when either bound is reached. Releasing twice frees one slot. */
  acquire(key: string): (() => void) | null {
    const held = this.byKey.get(key) ?? 0;
    if (held >= this.bounds.perKey || this.total >= this.bounds.total) return null;
    this.byKey.set(key, held + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byKey.get(key) ?? 1) - 1;
      if (left === 0) this.byKey.delete(key);
      else this.byKey.set(key, left);
    };
  }

  get inFlight(): number {
    return this.total;
  }
}
