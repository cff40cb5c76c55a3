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

/** At most this many sessions' measures go in one report call, so no call runs long. */
const REPORT_BATCH = 200;

/**
 * What each tenant keeps in Redis (SPEC §10 "Redis storage"). Each session counts its own bytes
 * in its slot, in the same script as every write (`storedBytes`, lua/includes/stored-bytes.lua); the
 * tenant's total lives in the tenant's slot and is reconciled from those counts: after a write
 * its session is measured (`measure-session.lua`) and the measure reported
 * (`tenant-stored-bytes.lua`, one call for the sessions of a tenant measured together), which
 * replaces each session's last measure, so a lost report is mended by the next. A session whose
 * keys expire leaves the total at the expiry its last measure saw. No script touches both slots,
 * so this holds on Redis Cluster unchanged.
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

  /** Records the sessions' measures (by session id) in their tenant's total; answers the total. */
  async report(tenant: string, measures: ReadonlyMap<string, SessionMeasure>): Promise<number> {
    const entries = [...measures];
    let total = 0;
    for (let at = 0; at < entries.length; at += REPORT_BATCH) {
      const args = entries.slice(at, at + REPORT_BATCH).flatMap(([sessionId, m]) => [sessionId, m.bytes, m.ttlMs]);
      [total] = (await this.tenant(tenant, ['report', 0, ...args])) as [number];
    }
    return Number(total);
  }

  /** Measures the session and reports it. */
  async refresh(ref: SessionRef, trim = false): Promise<number> {
    return this.report(ref.tenant, new Map([[ref.sessionId, await this.measure(ref, trim)]]));
  }

  /**
   * Measures the tenant's sessions and reports them in one call (per REPORT_BATCH): what a writer
   * does after its writes. The sessions measured are reported even when another's measure failed;
   * the first failure is then thrown.
   */
  async refreshAll(tenant: string, sessionIds: readonly string[]): Promise<void> {
    const measured = await Promise.allSettled(sessionIds.map((sessionId) => this.measure({ tenant, sessionId })));
    const measures = new Map<string, SessionMeasure>();
    measured.forEach((m, i) => {
      if (m.status === 'fulfilled') measures.set(sessionIds[i], m.value);
    });
    if (measures.size > 0) await this.report(tenant, measures);
    const failed = measured.find((m): m is PromiseRejectedResult => m.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * The tenant's total (sessions past their expiry dropped first) with what its tools hold (SPEC
   * §18, kept by tenant-tool.lua; sent with the check, one round trip), and its `largest` sessions' ids.
   */
  async total(tenant: string, largest = 0): Promise<{ bytes: number; largest: string[] }> {
    const [[total, ...ids], toolBytes] = await Promise.all([
      this.tenant(tenant, ['check', largest]),
      guard(() => this.redis.hget(this.keys.tenantToolsMeta(tenant), 'bytes')),
    ]);
    return { bytes: Number(total) + Number(toolBytes ?? 0), largest: ids.map(String) };
  }

  /** The session no longer counts (deleted). */
  async forget(ref: SessionRef): Promise<void> {
    await this.tenant(ref.tenant, ['forget', 0, ref.sessionId]);
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
