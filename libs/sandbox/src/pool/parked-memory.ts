/** How much of a pool's memory parked VMs may keep (SPEC §10 "Parked memory", §12). */
export interface ParkedMemoryLimits {
  /** VMs of parked (or resuming) runs kept in memory at once. */
  slots: number;
  /** Their wasm memory together, in bytes. */
  bytes: number;
  /** VMs one tenant keeps in memory at once. */
  tenantSlots: number;
}

/** A run whose VM parks (again, after a resume) in memory. */
export interface ParkingVm {
  runId: string;
  tenant: string;
  /** Its wasm memory size. */
  bytes: number;
}

/**
 * What parking a VM takes: the runs whose VMs leave memory first (to their images), or a refusal
 * when its tenant's share or the pool's slots are full of VMs that may not leave.
 */
export type ParkPlan = { evict: string[] } | { refused: 'tenant_slots' | 'slots' };

interface KeptVm {
  tenant: string;
  bytes: number;
}

/**
 * The VMs of parked runs a pool keeps in memory, coldest (parked longest ago) first, and the one
 * rule deciding which of them leave (SPEC §10 "Parked memory"). Only runs `mayLeave` allows are
 * ever chosen (their image is in Redis and nothing but Redis records is waited on).
 *
 * - A tenant at its share of the slots that parks one more evicts its own coldest VM; when none of
 *   its own may leave, the park is refused: another tenant's runs never make room for it.
 * - Past the pool's slots, or past its memory budget, a VM of the tenant holding the most (slots,
 *   or bytes) leaves first, its coldest; then the next tenant's. So one tenant's big VMs push out
 *   its own runs before any other tenant's. Past the slots with nothing that may leave, the park
 *   is refused; past the budget it is not (the run keeps memory the budget had no room for, until
 *   `overBudget` finds something that may leave).
 *
 * A run being resumed keeps its slot and its entry; parking again makes it the hottest.
 */
export class ParkedMemory {
  private readonly kept = new Map<string, KeptVm>();
  private total = 0;

  /** Wasm memory of every VM kept, in bytes. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.kept.size;
  }

  has(runId: string): boolean {
    return this.kept.has(runId);
  }

  tenantOf(runId: string): string | undefined {
    return this.kept.get(runId)?.tenant;
  }

  /** What parking `vm` takes; nothing changes until `keep` (and `forget` of each evicted run). */
  plan(vm: ParkingVm, limits: ParkedMemoryLimits, mayLeave: (runId: string) => boolean): ParkPlan {
    const leaving = new Set<string>();
    const candidate = (runId: string): boolean => runId !== vm.runId && !leaving.has(runId) && mayLeave(runId);
    const before = this.kept.get(vm.runId);
    if (!before) {
      if (this.slotsOf(vm.tenant, leaving) >= limits.tenantSlots) {
        const own = this.coldestOf(vm.tenant, candidate);
        if (own === undefined) return { refused: 'tenant_slots' };
        leaving.add(own);
      }
      if (this.kept.size - leaving.size >= limits.slots) {
        const victim = this.victim('slots', vm, leaving, candidate);
        if (victim === undefined) return { refused: 'slots' };
        leaving.add(victim);
      }
    }
    let bytes = this.total - (before?.bytes ?? 0) + vm.bytes - this.sum(leaving);
    while (bytes > limits.bytes) {
      const victim = this.victim('bytes', vm, leaving, candidate);
      if (victim === undefined) break;
      leaving.add(victim);
      bytes -= this.kept.get(victim)!.bytes;
    }
    return { evict: [...leaving] };
  }

  /** Runs to evict now to get back within the memory budget (a run that may leave now, e.g. its image was just written). */
  overBudget(limits: ParkedMemoryLimits, mayLeave: (runId: string) => boolean): string[] {
    const leaving = new Set<string>();
    const candidate = (runId: string): boolean => !leaving.has(runId) && mayLeave(runId);
    let bytes = this.total;
    while (bytes > limits.bytes) {
      const victim = this.victim('bytes', undefined, leaving, candidate);
      if (victim === undefined) break;
      leaving.add(victim);
      bytes -= this.kept.get(victim)!.bytes;
    }
    return [...leaving];
  }

  /** The VM parked (again): the hottest now, at its current size. */
  keep(vm: ParkingVm): void {
    this.forget(vm.runId);
    this.kept.set(vm.runId, { tenant: vm.tenant, bytes: vm.bytes });
    this.total += vm.bytes;
  }

  /** Its VM left memory (resumed to its end, discarded, evicted, lost). */
  forget(runId: string): void {
    const vm = this.kept.get(runId);
    if (!vm) return;
    this.kept.delete(runId);
    this.total -= vm.bytes;
  }

  clear(): void {
    this.kept.clear();
    this.total = 0;
  }

  /**
   * The coldest VM that may leave of the tenant holding the most (`measure`) after this park, then
   * of the next tenant; ties go to the tenant whose candidate is coldest.
   */
  private victim(
    measure: 'slots' | 'bytes',
    parking: ParkingVm | undefined,
    leaving: ReadonlySet<string>,
    candidate: (runId: string) => boolean,
  ): string | undefined {
    const held = new Map<string, number>();
    const coldest = new Map<string, string>();
    for (const [runId, vm] of this.kept) {
      if (leaving.has(runId) || runId === parking?.runId) continue;
      held.set(vm.tenant, (held.get(vm.tenant) ?? 0) + (measure === 'slots' ? 1 : vm.bytes));
      if (!coldest.has(vm.tenant) && candidate(runId)) coldest.set(vm.tenant, runId);
    }
    if (parking) held.set(parking.tenant, (held.get(parking.tenant) ?? 0) + (measure === 'slots' ? 1 : parking.bytes));
    let best: string | undefined;
    let bestHeld = -1;
    // `coldest` is in park order of its candidates, so a strict `>` keeps the colder one on ties.
    for (const [tenant, runId] of coldest) {
      const amount = held.get(tenant) ?? 0;
      if (amount > bestHeld) {
        best = runId;
        bestHeld = amount;
      }
    }
    return best;
  }

  private coldestOf(tenant: string, candidate: (runId: string) => boolean): string | undefined {
    for (const [runId, vm] of this.kept) if (vm.tenant === tenant && candidate(runId)) return runId;
    return undefined;
  }

  private slotsOf(tenant: string, leaving: ReadonlySet<string>): number {
    let count = 0;
    for (const [runId, vm] of this.kept) if (vm.tenant === tenant && !leaving.has(runId)) count += 1;
    return count;
  }

  private sum(runIds: ReadonlySet<string>): number {
    let bytes = 0;
    for (const runId of runIds) bytes += this.kept.get(runId)?.bytes ?? 0;
    return bytes;
  }
}
