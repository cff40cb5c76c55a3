import { failedOutcome, TOO_MANY_SUSPENDED_MESSAGE, type CellOutcome } from '@codemode/cells';
import { ParkedMemory, type ParkedMemoryLimits } from './parked-memory';
import type { PoolLogger, PoolThread } from './pool-thread';

/**
 * SPEC §12: which parked runs may leave memory when the slots are full (their image is kept
 * elsewhere), and what to do once one has (its VM is gone; release it so any worker restores it).
 */
export interface ParkedEviction {
  evictable(runId: string): boolean;
  evicted(runId: string): void;
}

/** What bounds the parked VMs of a pool (`SandboxPoolOptions`). */
export interface ParkedRunsLimits {
  maxParked: number;
  maxParkedMemoryBytes?: number;
  maxParkedPerTenant?: () => number;
}

/**
 * The parked runs of a pool: the thread holding each VM, and admitting a run that parks within
 * the slots and the memory budget, after the VMs `ParkedMemory` names have left for their images.
 * A run being resumed is not parked here but keeps its slot in `memory` until its leg ends.
 */
export class ParkedRuns {
  private readonly threads = new Map<string, PoolThread>();
  /** The VMs of parked and resuming runs in memory, and which of them leave when room is needed. */
  private readonly memory = new ParkedMemory();
  private eviction: ParkedEviction | undefined;

  constructor(
    private readonly limits: ParkedRunsLimits,
    private readonly log: PoolLogger,
  ) {}

  get size(): number {
    return this.threads.size;
  }

  /** Wasm memory of the VMs of parked (and resuming) runs, in bytes. */
  get memoryBytes(): number {
    return this.memory.bytes;
  }

  has(runId: string): boolean {
    return this.threads.has(runId);
  }

  threadOf(runId: string): PoolThread | undefined {
    return this.threads.get(runId);
  }

  /** The tenant of a parked or resuming run. */
  tenantOf(runId: string): string | undefined {
    return this.memory.tenantOf(runId);
  }

  evictWith(eviction: ParkedEviction): void {
    this.eviction = eviction;
  }

  /**
   * A leg ended: a waiting outcome parks the run, after the runs `ParkedMemory` names have left
   * memory, or fails `too many suspended code mode runs.` when its tenant's share or the slots are
   * full of runs that may not leave. A resuming run keeps its slot.
   */
  admit(runId: string, thread: PoolThread, tenant: string | undefined, outcome: CellOutcome): CellOutcome {
    if (outcome.status !== 'waiting') {
      this.memory.forget(runId);
      return outcome;
    }
    const vm = { runId, tenant: this.memory.tenantOf(runId) ?? tenant ?? '', bytes: outcome.memoryBytes };
    const plan = this.memory.plan(vm, this.memoryLimits(), (id) => this.mayLeave(id));
    if ('refused' in plan) {
      this.memory.forget(runId);
      thread.discard(runId);
      this.log('warn', 'too many suspended code mode runs; failing the run', {
        runId,
        refused: plan.refused,
        maxParked: this.limits.maxParked,
      });
      return failedOutcome({ code: 'invalid_input', phase: 'host', error: TOO_MANY_SUSPENDED_MESSAGE }, outcome);
    }
    for (const id of plan.evict) this.evict(id);
    this.memory.keep(vm);
    this.threads.set(runId, thread);
    return outcome;
  }

  /** The run leaves parking for a resume: its VM stays in memory and keeps its slot. */
  takeForResume(runId: string): PoolThread | undefined {
    const thread = this.threads.get(runId);
    this.threads.delete(runId);
    return thread;
  }

  /** A parked run is discarded: its slot is free. */
  discard(runId: string): void {
    if (this.threads.delete(runId)) this.memory.forget(runId);
  }

  /** The run holds no VM in `thread` any more (ended, discarded or lost there). */
  ended(runId: string, thread: PoolThread): void {
    if (this.threads.get(runId) !== thread) return;
    this.threads.delete(runId);
    this.memory.forget(runId);
  }

  /**
   * Evicts parked runs that may leave (the coldest of the tenant holding the most memory first)
   * while the parked VMs are past the memory budget: for runs that could not leave when they
   * parked (their image was not written yet).
   */
  keepWithinBudget(): void {
    for (const runId of this.memory.overBudget(this.memoryLimits(), (id) => this.mayLeave(id))) this.evict(runId);
  }

  clear(): void {
    this.threads.clear();
    this.memory.clear();
  }

  private memoryLimits(): ParkedMemoryLimits {
    return {
      slots: this.limits.maxParked,
      bytes: this.limits.maxParkedMemoryBytes ?? Number.POSITIVE_INFINITY,
      tenantSlots: this.limits.maxParkedPerTenant?.() ?? this.limits.maxParked,
    };
  }

  /** Parked (not resuming) and its owner says its VM may leave memory (its image is in Redis). */
  private mayLeave(runId: string): boolean {
    return this.threads.has(runId) && this.eviction?.evictable(runId) === true;
  }

  /** Drops the VM of a parked run that may leave memory, and tells its owner. */
  private evict(runId: string): void {
    const thread = this.threads.get(runId);
    if (!thread) return;
    this.threads.delete(runId);
    this.memory.forget(runId);
    thread.discard(runId);
    this.eviction?.evicted(runId);
  }
}
