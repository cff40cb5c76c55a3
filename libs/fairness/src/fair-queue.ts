/**
 * Items waiting for a sandbox thread, handed out round-robin across tenants (SPEC §10 fairness):
 * each `shift` takes the oldest item of the next tenant in turn, so one tenant with a thousand
 * waiting cells delays another tenant's single cell by at most one of its own.
 */
export class FairQueue<T> {
  private readonly byTenant = new Map<string, T[]>();
  /** Tenants with waiting items, in turn order; the head is served next. */
  private readonly turns: string[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(tenant: string, item: T): void {
    let items = this.byTenant.get(tenant);
    if (!items) {
      items = [];
      this.byTenant.set(tenant, items);
      this.turns.push(tenant);
    }
    items.push(item);
    this.count += 1;
  }

  /** The next tenant's oldest item; that tenant goes to the back of the turn order. */
  shift(): T | undefined {
    return this.shiftFirst(() => true);
  }

  /**
   * {@link shift}, passing over tenants that may not be served now (`eligible` false): they keep
   * their place in the turn order. Undefined when no waiting tenant is eligible.
   */
  shiftFirst(eligible: (tenant: string) => boolean): T | undefined {
    const turn = this.turns.findIndex(eligible);
    if (turn < 0) return undefined;
    const [tenant] = this.turns.splice(turn, 1);
    const items = this.byTenant.get(tenant)!;
    const item = items.shift()!;
    this.count -= 1;
    if (items.length > 0) this.turns.push(tenant);
    else this.byTenant.delete(tenant);
    return item;
  }

  /** Takes `item` out wherever it waits; false when it was not waiting. */
  remove(item: T): boolean {
    for (const [tenant, items] of this.byTenant) {
      const index = items.indexOf(item);
      if (index < 0) continue;
      items.splice(index, 1);
      this.count -= 1;
      if (items.length === 0) {
        this.byTenant.delete(tenant);
        this.turns.splice(this.turns.indexOf(tenant), 1);
      }
      return true;
    }
    return false;
  }

  some(predicate: (item: T) => boolean): boolean {
    for (const items of this.byTenant.values()) if (items.some(predicate)) return true;
    return false;
  }

  /** Empties the queue, answering every item in the order it would have been served. */
  drain(): T[] {
    const out: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) out.push(item);
    return out;
  }
}
