/** How long a leg waits only on the host before its cell job gives its slot back. */
export const IDLE_RELEASE_MS = 1000;
/** How often legs are looked at (the pool says nothing when guest code stops executing). */
export const IDLE_POLL_MS = 250;

interface Watch {
  runId: string;
  tenant: string;
  /** When the leg was first seen waiting only on the host, in this stretch of waiting. */
  idleSince: number | undefined;
  release(): void;
}

export interface IdleLegsOptions {
  /** The run waits only on the host (SandboxPool.waitsOnHost). */
  waitsOnHost(runId: string): boolean;
  /** Released legs one tenant may hold on this worker at once. */
  tenantCap(): number;
  now?: () => number;
}

/**
 * SPEC §10 fate isolation, the one rule for when a cell job gives its cell slot back: once its leg
 * has waited only on the host (timers, tool calls, platform answers, approvals) for
 * `IDLE_RELEASE_MS`, while its tenant holds fewer released legs on this worker than its cap. A
 * released leg counts against that cap until its work settles; past the cap a tenant's waiting legs
 * keep their slots, so no tenant's waiting cells take every slot from another's runnable ones, and
 * a tenant's waiting cells on a worker stay bounded.
 */
export class IdleLegs {
  private readonly watches = new Set<Watch>();
  private readonly released = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: IdleLegsOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Resolves true once `runId`'s leg may give its slot back (it is counted released until `work`
   * settles), false once `work` settled first. Never rejects: the caller awaits `work` itself.
   */
  untilIdle(runId: string, tenant: string, work: Promise<unknown>): Promise<boolean> {
    return new Promise((resolve) => {
      const watch: Watch = {
        runId,
        tenant,
        idleSince: undefined,
        release: () => {
          this.stopWatching(watch);
          this.count(tenant, 1);
          void work.then(
            () => this.count(tenant, -1),
            () => this.count(tenant, -1),
          );
          resolve(true);
        },
      };
      const done = () => {
        if (!this.watches.has(watch)) return;
        this.stopWatching(watch);
        resolve(false);
      };
      work.then(done, done);
      this.watches.add(watch);
      this.timer ??= setInterval(() => this.poll(), IDLE_POLL_MS).unref();
    });
  }

  /** Legs released now by `tenant` (for specs and the report). */
  releasedBy(tenant: string): number {
    return this.released.get(tenant) ?? 0;
  }

  /** One look at every watched leg (the timer's tick). */
  poll(): void {
    const now = this.now();
    for (const watch of [...this.watches]) {
      if (!this.options.waitsOnHost(watch.runId)) {
        watch.idleSince = undefined;
        continue;
      }
      watch.idleSince ??= now;
      if (now - watch.idleSince >= IDLE_RELEASE_MS && this.releasedBy(watch.tenant) < this.options.tenantCap()) watch.release();
    }
  }

  private stopWatching(watch: Watch): void {
    this.watches.delete(watch);
    if (this.watches.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private count(tenant: string, by: number): void {
    const next = this.releasedBy(tenant) + by;
    if (next > 0) this.released.set(tenant, next);
    else this.released.delete(tenant);
  }
}
