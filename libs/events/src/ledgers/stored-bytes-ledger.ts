import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';

/** One session's bytes in Redis and how long its keys have left (negative: gone). */
export interface SessionMeasure {
  readonly bytes: number;
  readonly ttlMs: number;
}

/**
 * What each tenant keeps in Redis (SPEC §10 "Redis storage"). Each session counts its own bytes
 * in its slot, in the same script as every write (`storedBytes`, lua/includes/stored-bytes.lua); the
 * tenant's total lives in the tenant's slot and is reconciled from those counts: after a write
 * its session is measured (`measure-session.lua`) and the measure reported
 * (`tenant-stored-bytes.lua`), which replaces that session's last measure, so a lost report is
 * mended by the next. A session whose keys expire leaves the total at the expiry its last measure
 * saw. No script touches both slots, so this holds on Redis Cluster unchanged.
 */
export class StoredBytesLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader = ScriptLoader.default(),
  ) {}

  /** The session's bytes now; with `trim`, after applying retention to it (what an append would trim). */
  async measure(ref: SessionRef, trim = false): Promise<SessionMeasure> {
    const keys = [...this.keys.scriptKeys(ref, ''), this.keys.resultsSizes(ref)];
    const [bytes, ttlMs] = (await guard(() => this.scripts.run(this.redis, 'measure-session', keys, [trim ? '1' : '']))) as [
      number,
      number,
    ];
    return { bytes, ttlMs };
  }

  /** Records the session's measure in its tenant's total; answers the total. */
  async report(ref: SessionRef, measure: SessionMeasure): Promise<number> {
    const [total] = await this.tenant(ref.tenant, ['report', ref.sessionId, measure.bytes, measure.ttlMs, 0]);
    return Number(total);
  }

  /** Measures the session and reports it: what a writer does after its write. */
  async refresh(ref: SessionRef, trim = false): Promise<number> {
    return this.report(ref, await this.measure(ref, trim));
  }

  /**
   * The tenant's total (sessions past their expiry dropped first) with what its tools hold (SPEC
   * §18, kept by tenant-tool.lua; sent with the check, one round trip), and its `largest` sessions' ids.
   */
  async total(tenant: string, largest = 0): Promise<{ bytes: number; largest: string[] }> {
    const [[total, ...ids], toolBytes] = await Promise.all([
      this.tenant(tenant, ['check', '', 0, 0, largest]),
      guard(() => this.redis.hget(this.keys.tenantToolsMeta(tenant), 'bytes')),
    ]);
    return { bytes: Number(total) + Number(toolBytes ?? 0), largest: ids.map(String) };
  }

  /** The session no longer counts (deleted). */
  async forget(ref: SessionRef): Promise<void> {
    await this.tenant(ref.tenant, ['forget', ref.sessionId, 0, 0, 0]);
  }

  private async tenant(tenant: string, args: (string | number)[]): Promise<(string | number)[]> {
    const keys = [
      this.keys.tenantQuota(tenant, 'stored-bytes'),
      this.keys.tenantQuota(tenant, 'stored-until'),
      this.keys.tenantQuota(tenant, 'stored-total'),
    ];
    return (await guard(() => this.scripts.run(this.redis, 'tenant-stored-bytes', keys, args))) as (string | number)[];
  }
}
