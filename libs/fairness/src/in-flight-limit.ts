/** How much work may be in flight: per key (a tenant) and in all. */
export interface InFlightBounds {
  readonly perKey: number;
  /** Unbounded when absent. */
  readonly total?: number;
}

/**
 * Counts work in flight per key and in all, and refuses more past either bound (SPEC §10 fate
 * isolation): one tenant's slow or failing work holds at most its per-key share, and the process
 * never holds more than `total`, instead of queueing without bound. The one count behind every
 * per-tenant in-flight bound in a process (exit notifications, detached shell calls).
 */
export class InFlightLimit {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly bounds: InFlightBounds) {}

  /**
   * A release function for one slot of `key`, or null when either bound is reached. `perKey`
   * overrides the bound for this key (a tenant's own quota). Releasing twice frees one slot.
   */
  acquire(key: string, perKey = this.bounds.perKey): (() => void) | null {
    const held = this.byKey.get(key) ?? 0;
    if (held >= perKey || this.total >= (this.bounds.total ?? Number.POSITIVE_INFINITY)) return null;
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

  /** Work of `key` in flight now. */
  held(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  get inFlight(): number {
    return this.total;
  }
}
