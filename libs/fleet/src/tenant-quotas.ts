import type { RedisClient } from '@codemode/events';
import { guard, type KeySpace, type ScriptLoader } from '@codemode/events';
import { fleetScripts, type FleetScriptName } from './scripts';

/** Quotas held as leased slots: a holder keeps its slot by renewing its lease. */
export type LeasedQuota = 'inflight' | 'streams' | 'shell';

/** What admitting an `exec`/`wait` call answered (`admitCall`). */
export type CallAdmission =
  | { admitted: true; count: number }
  | { admitted: false; limit: 'rate'; retryAfterMs: number }
  | { admitted: false; limit: 'inflight'; count: number };

export type ParkedAdmission =
  { admitted: true; runs: number } | { admitted: false; limit: 'runs'; runs: number } | { admitted: false; limit: 'bytes'; bytes: number };

/**
 * Per-tenant quota counts shared by every API replica and worker (SPEC §10). Nothing here is a
 * bare counter that a crash could leave high: slots are leases that lapse unless their holder
 * renews them, parked runs stop counting at their expiry, and the request bucket refills.
 */
export class TenantQuotaLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader<FleetScriptName> = fleetScripts(),
  ) {}

  /** Takes a slot for `holder` (or renews its lease); `count` is the tenant's holders after it. */
  async takeSlot(
    tenant: string,
    quota: LeasedQuota,
    holder: string,
    max: number,
    leaseMs: number,
  ): Promise<{ taken: boolean; count: number }> {
    const [taken, count] = (await guard(() =>
      this.scripts.run(this.redis, 'take-lease-slot', [this.keys.tenantQuota(tenant, quota)], [holder, leaseMs, finite(max)]),
    )) as [number, number];
    return { taken: taken === 1, count };
  }

  /**
   * Admits an `exec`/`wait` call in one script: `tokens` requests against the tenant's rate (0
   * when the request already took its own, or the rate is unlimited), then an in-flight slot for
   * `slot.holder` (none when `slot` is null: the quota is unlimited). Refused at the rate it takes
   * nothing; refused at the in-flight quota its tokens are spent, as any refused request's.
   * `count` is the tenant's in-flight holders with this one (0 without a slot).
   */
  async admitCall(
    tenant: string,
    rate: { rate: number; burst: number; tokens: number },
    slot: { holder: string; max: number; leaseMs: number } | null,
  ): Promise<CallAdmission> {
    const [code, value] = (await guard(() =>
      this.scripts.run(
        this.redis,
        'admit-call',
        [this.keys.tenantQuota(tenant, 'rate'), this.keys.tenantQuota(tenant, 'inflight')],
        [rate.rate, rate.burst, rate.tokens, slot?.holder ?? '', slot?.leaseMs ?? 0, slot === null ? 0 : finite(slot.max)],
      ),
    )) as [number, number];
    if (code === 1) return { admitted: true, count: value };
    return code === 0 ? { admitted: false, limit: 'rate', retryAfterMs: value } : { admitted: false, limit: 'inflight', count: value };
  }

  /** Renews the leases of holders that still hold their slot; answers how many did. */
  async renewSlots(tenant: string, quota: LeasedQuota, holders: readonly string[], leaseMs: number): Promise<number> {
    if (holders.length === 0) return 0;
    return (await guard(() =>
      this.scripts.run(this.redis, 'renew-lease-slots', [this.keys.tenantQuota(tenant, quota)], [leaseMs, ...holders]),
    )) as number;
  }

  async releaseSlot(tenant: string, quota: LeasedQuota, holder: string): Promise<void> {
    await guard(() => this.redis.zrem(this.keys.tenantQuota(tenant, quota), holder));
  }

  /** Holders of a quota now (lapsed leases excluded). */
  async slotsHeld(tenant: string, quota: LeasedQuota): Promise<number> {
    return guard(() => this.redis.zcount(this.keys.tenantQuota(tenant, quota), `(${Date.now()}`, '+inf'));
  }

  /** Counts a parking run against its tenant's parked runs and bytes; `now` is the clock `expiresAt` was read on. */
  async admitParked(
    tenant: string,
    runId: string,
    parked: { expiresAt: number; bytes: number; now: number },
    max: { runs: number; bytes: number },
  ): Promise<ParkedAdmission> {
    const [code, value] = (await guard(() =>
      this.scripts.run(
        this.redis,
        'admit-parked-run',
        [this.keys.tenantQuota(tenant, 'parked'), this.keys.tenantQuota(tenant, 'parked-bytes')],
        [runId, parked.expiresAt, parked.bytes, finite(max.runs), finite(max.bytes), parked.now],
      ),
    )) as [number, number];
    if (code === 1) return { admitted: true, runs: value };
    return code === 0 ? { admitted: false, limit: 'runs', runs: value } : { admitted: false, limit: 'bytes', bytes: value };
  }

  /**
   * A parked run now counts `bytes` (its image's size once its VM left memory); false when it
   * holds no place any more (released meanwhile), which stays so.
   */
  async recountParked(tenant: string, runId: string, bytes: number): Promise<boolean> {
    const recounted = await guard(() =>
      this.scripts.run(
        this.redis,
        'recount-parked-run',
        [this.keys.tenantQuota(tenant, 'parked'), this.keys.tenantQuota(tenant, 'parked-bytes')],
        [runId, bytes],
      ),
    );
    return recounted === 1;
  }

  /** The run is no longer parked (resumed to its end, aborted, lost, expired). */
  async freeParked(tenant: string, runId: string): Promise<void> {
    await guard(() =>
      this.redis
        .multi()
        .zrem(this.keys.tenantQuota(tenant, 'parked'), runId)
        .hdel(this.keys.tenantQuota(tenant, 'parked-bytes'), runId)
        .exec(),
    );
  }

  /**
   * `count` requests against the tenant's rate, all or none (`admit-call` without a slot);
   * `retryAfterMs` is when `count` tokens are back (never, past `burst`: the caller refuses that itself).
   */
  async takeRequestToken(tenant: string, rate: number, burst: number, count = 1): Promise<{ taken: boolean; retryAfterMs: number }> {
    const admission = await this.admitCall(tenant, { rate, burst, tokens: count }, null);
    return admission.admitted
      ? { taken: true, retryAfterMs: 0 }
      : { taken: false, retryAfterMs: admission.limit === 'rate' ? admission.retryAfterMs : 0 };
  }
}

/** An unlimited quota still goes through the script (the count is useful), as a very large number. */
function finite(value: number): number {
  return Number.isFinite(value) ? value : Number.MAX_SAFE_INTEGER;
}
