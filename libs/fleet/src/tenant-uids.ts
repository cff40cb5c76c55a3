import type { RedisClient } from '@codemode/events';
import { guard, type KeySpace } from '@codemode/events';
import { TenantUidsExhaustedError } from './errors';

/** An inclusive range of host uids. */
export interface UidRange {
  readonly first: number;
  readonly last: number;
}

/**
 * One host uid per tenant for its shell sandboxes, the same on every worker: the files a tenant's
 * commands leave in its workspaces belong to it alone, and a tenant at its process cap cannot
 * keep another's commands from starting. Handed out in order from the configured range; a tenant
 * keeps its uid for the deployment's life.
 */
export class TenantUids {
  private readonly known = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly range: UidRange,
  ) {}

  async uidOf(tenant: string): Promise<number> {
    const cached = this.known.get(tenant);
    if (cached !== undefined) return cached;
    const uid = (await this.recorded(tenant)) ?? (await this.allocate(tenant));
    this.known.set(tenant, uid);
    return uid;
  }

  private async recorded(tenant: string): Promise<number | null> {
    const raw = await guard(() => this.redis.hget(this.keys.tenantUids(), tenant));
    return raw === null ? null : Number(raw);
  }

  /** Two workers racing for a new tenant each draw a number; HSETNX keeps one, the other is skipped. */
  private async allocate(tenant: string): Promise<number> {
    const offset = (await guard(() => this.redis.incr(this.keys.tenantUidCounter()))) - 1;
    const uid = this.range.first + offset;
    if (uid > this.range.last) throw new TenantUidsExhaustedError(this.range.first, this.range.last);
    await guard(() => this.redis.hsetnx(this.keys.tenantUids(), tenant, String(uid)));
    return (await this.recorded(tenant)) ?? uid;
  }
}
