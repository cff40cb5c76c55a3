import { randomUUID } from 'node:crypto';
import type { LeasedQuota, TenantQuotaLedger } from './tenant-quotas';

/** How long a slot stays held without renewal by default: a crashed holder's slots free within this. */
export const SLOT_LEASE_MS = 30_000;

/** A slot this process holds; `release` is idempotent. */
export interface LeasedSlot {
  /** The tenant's holders of this quota, this one included, when it was taken. */
  readonly count: number;
  release(): Promise<void>;
}

/**
 * The slots of per-tenant quotas held by this process (an API's in-flight calls and streams, a
 * worker's running shell sessions), renewed together on one timer so a long call or stream keeps
 * its slot, and let go of by dying: a process that stops renewing frees its slots within a lease.
 */
export class SlotLeases {
  private readonly held = new Map<string, { tenant: string; quota: LeasedQuota; holders: Set<string> }>();
  private readonly timer: NodeJS.Timeout;

  /** Held slots are renewed every third of `leaseMs`, well inside their lease. */
  constructor(
    private readonly ledger: TenantQuotaLedger,
    private readonly onRenewError: (error: unknown) => void = () => undefined,
    readonly leaseMs = SLOT_LEASE_MS,
  ) {
    this.timer = setInterval(() => void this.renewAll(), Math.floor(leaseMs / 3));
    this.timer.unref();
  }

  /** Takes a slot of `quota` for `tenant`, or answers null when the tenant holds `max` already. */
  async take(tenant: string, quota: LeasedQuota, max: number): Promise<LeasedSlot | null> {
    const holder = randomUUID();
    const { taken, count } = await this.ledger.takeSlot(tenant, quota, holder, max, this.leaseMs);
    return taken ? this.keep(tenant, quota, holder, count) : null;
  }

  /**
   * A slot taken for `holder` by a script that takes it along with something else (`admit-call`:
   * the in-flight slot with the request token), renewed and released by this process from now on.
   */
  keep(tenant: string, quota: LeasedQuota, holder: string, count: number): LeasedSlot {
    const group = this.group(tenant, quota);
    group.holders.add(holder);
    let released = false;
    return {
      count,
      release: async () => {
        if (released) return;
        released = true;
        group.holders.delete(holder);
        await this.ledger.releaseSlot(tenant, quota, holder);
      },
    };
  }

  close(): void {
    clearInterval(this.timer);
  }

  private group(tenant: string, quota: LeasedQuota) {
    const key = `${quota}\u0000${tenant}`;
    let group = this.held.get(key);
    if (!group) {
      group = { tenant, quota, holders: new Set() };
      this.held.set(key, group);
    }
    return group;
  }

  private async renewAll(): Promise<void> {
    for (const [key, group] of this.held) {
      if (group.holders.size === 0) {
        this.held.delete(key);
        continue;
      }
      await this.ledger.renewSlots(group.tenant, group.quota, [...group.holders], this.leaseMs).catch(this.onRenewError);
    }
  }
}
