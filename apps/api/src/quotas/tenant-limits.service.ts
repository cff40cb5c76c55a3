import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { apiTenancy, quotasFor, type AppConfig, type TenantQuotas } from '@codemode/config';
import type { SessionRef } from '@codemode/contracts';
import { isStoreUnavailable, StoredBytesLedger } from '@codemode/events';
import { SlotLeases, TenantQuotaLedger, type LeasedSlot } from '@codemode/fleet';
import { ApiMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { TenantLimitException } from './tenant-limit.exception';

/** A slot nobody counts: for unlimited quotas, and while Redis is away. */
const UNHELD: LeasedSlot = { count: 1, release: () => Promise.resolve() };

/** Redis away: the request goes on and meets the outage where it would anyway. */
function failOpen(error: unknown): null {
  if (isStoreUnavailable(error)) return null;
  throw error;
}

/** A call refused at the in-flight or stream quota is asked to come back after this long. */
const SLOT_RETRY_AFTER_SECONDS = 1;

/** SPEC §10 "Redis storage": what a write past the tenant's stored bytes is answered. */
export const STORAGE_QUOTA_ERROR = 'code mode storage quota reached for this tenant; delete sessions or wait for retention to free space.';
/** Space comes back by a DELETE or by retention, whose trims run at most once a minute: come back then. */
const STORAGE_RETRY_AFTER_SECONDS = 60;
/** A tenant at its stored bytes has its largest sessions trimmed by retention at most this often (per API process)… */
const RECLAIM_EVERY_MS = 60_000;
/** …this many of them. */
const RECLAIM_SESSIONS = 16;
/** A tenant found under half its stored bytes is not asked again for this long (per API process). */
const ROOMY_FOR_MS = 1000;
/**
 * A session's measure after a write waits this long, so a burst of writes costs one measure, and
 * the sessions of a tenant written meanwhile are reported to its total in one call.
 */
const MEASURE_DELAY_MS = 200;

/**
 * The API's side of SPEC §10 quotas, fleet-wide through Redis: in-flight `exec`/`wait` calls,
 * open event streams and the request rate of each tenant. Refusals are HTTP 429 with
 * `details.limit` and `Retry-After`, counted in `codemode_tenant_limited_total`.
 */
@Injectable()
export class TenantLimits implements OnApplicationShutdown {
  private readonly leases: SlotLeases;
  /**
   * Per tenant, until when its request bucket is known empty (from Redis' own answer): requests
   * before then are refused here without a Redis call, so a client that ignores `Retry-After`
   * costs the API as little as possible. Only ever refuses what Redis would refuse too.
   */
  private readonly emptyUntil = new Map<string, number>();
  /** Per tenant, when this process last had retention trim its largest sessions (see `storageRoom`). */
  private readonly reclaimedAt = new Map<string, number>();
  /** Per tenant, until when it is known to be under half its stored bytes. */
  private readonly roomyUntil = new Map<string, number>();
  /** Per tenant, the sessions whose measure is due (`storageWritten`) and the timer that measures them. */
  private readonly measuring = new Map<string, { sessionIds: Set<string>; timer: NodeJS.Timeout }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly ledger: TenantQuotaLedger,
    private readonly metrics: ApiMetrics,
    private readonly stored: StoredBytesLedger,
  ) {
    this.leases = new SlotLeases(
      ledger,
      (error) => this.logger.warn({ err: error }, 'could not renew quota leases; retrying'),
      config.tenancySettings.quotaLeaseMs,
    );
  }

  onApplicationShutdown(): void {
    this.leases.close();
    for (const { timer } of this.measuring.values()) clearTimeout(timer);
  }

  quotas(tenant: string): TenantQuotas {
    return quotasFor(this.config.tenancySettings, tenant, apiTenancy(this.config));
  }

  /**
   * Runs an `exec` or `wait` inside one of the tenant's in-flight slots, admitted by one script
   * together with `requestTokens` of its request rate (1 for a REST call, whose rate guard left
   * them to this admission; 0 over MCP, whose POST took its tokens). `rank` is how many calls of
   * the tenant are in flight with it: the cell queue serves tenants with fewer first. `storage`
   * is `storageRoom`, read beside the admission so it costs no round trip of its own, and only
   * once the rate was not refused here: a flood past the rate costs Redis nothing.
   * @throws TenantLimitException before anything is recorded when the tenant is at its rate
   * (answered first, as the guard would) or at its in-flight quota.
   */
  async inflight<T>(tenant: string, requestTokens: number, call: (rank: number, storage: Promise<boolean>) => Promise<T>): Promise<T> {
    const tokens = Number.isFinite(this.quotas(tenant).rate) ? requestTokens : 0;
    if (tokens > 0) this.refuseKnownShort(tenant, tokens);
    const storage = this.storageRoom(tenant);
    storage.catch(() => undefined);
    const slot = await this.admit(tenant, tokens);
    try {
      return await call(slot.count, storage);
    } finally {
      // Sent, not awaited: the answer does not wait a round trip for it. The release is written to
      // the connection before the answer leaves, so this process's next admission for the tenant
      // comes after it on that connection; a lost release frees the slot at its lease's end.
      slot.release().catch(() => undefined);
    }
  }

  /** Holds a stream slot until the returned release is called. */
  async stream(tenant: string): Promise<LeasedSlot> {
    const max = this.quotas(tenant).maxStreams;
    const slot = await this.takeStream(tenant, max);
    if (!slot)
      throw this.refuse(
        tenant,
        'streams',
        `tenant event stream quota reached (${max} open at once); close a stream first.`,
        SLOT_RETRY_AFTER_SECONDS,
      );
    return slot;
  }

  /**
   * `count` requests (a `/v1` request, or the messages of an MCP POST: SPEC §14) against the
   * tenant's rate, taken together or refused together. More than the burst at once is refused
   * without a Redis call: the bucket never holds them.
   */
  async request(tenant: string, count = 1): Promise<void> {
    const { rate, burst } = this.quotas(tenant);
    if (!Number.isFinite(rate)) return;
    this.refuseKnownShort(tenant, count);
    const token = await this.ledger.takeRequestToken(tenant, rate, bucketSize(rate, burst), count).catch(failOpen);
    if (token && !token.taken) throw this.rateRefused(tenant, count, token.retryAfterMs);
  }

  /**
   * Whether the tenant may write to Redis (SPEC §10 "Redis storage"): its stored bytes, fleet-wide,
   * are under `maxStoredBytes`. At or over it, retention is first applied to its largest sessions
   * (at most once a minute per process: a refused tenant writes nothing, so no append would trim
   * them), and the tenant is refused only if that did not bring it under. Refusals are counted.
   * A tenant under half its quota is not asked again for ROOMY_FOR_MS. Without Redis the write
   * goes on and meets the outage itself.
   */
  async storageRoom(tenant: string): Promise<boolean> {
    const max = this.quotas(tenant).maxStoredBytes;
    if (!Number.isFinite(max)) return true;
    const now = Date.now();
    if ((this.roomyUntil.get(tenant) ?? 0) > now) return true;
    const total = await this.stored.total(tenant, RECLAIM_SESSIONS).catch(failOpen);
    if (total && total.bytes <= max / 2) this.roomyUntil.set(tenant, now + ROOMY_FOR_MS);
    if (!total || total.bytes < max) return true;
    let bytes = total.bytes;
    if (now - (this.reclaimedAt.get(tenant) ?? 0) >= RECLAIM_EVERY_MS) {
      this.reclaimedAt.set(tenant, now);
      for (const sessionId of total.largest) {
        bytes = (await this.stored.refresh({ tenant, sessionId }, true).catch(failOpen)) ?? bytes;
      }
    }
    if (bytes < max) return true;
    this.metrics.tenantLimitedOnce('stored_bytes', tenant);
    this.logger.debug({ tenant, limit: 'stored_bytes', bytes }, 'write refused at the tenant storage quota');
    return false;
  }

  /** `storageRoom` for routes answered with HTTP 429 (`details.limit: "stored_bytes"`). */
  async requireStorage(tenant: string): Promise<void> {
    if (await this.storageRoom(tenant)) return;
    throw new TenantLimitException('stored_bytes', STORAGE_QUOTA_ERROR, STORAGE_RETRY_AFTER_SECONDS);
  }

  /**
   * After a write to the session (its answer sent or not): at most MEASURE_DELAY_MS later, the
   * session is measured and the measure reported to its tenant's total with those of the tenant's
   * other sessions written meanwhile, best effort; the next write of a session mends a report
   * that did not land.
   */
  storageWritten(ref: SessionRef): void {
    if (!Number.isFinite(this.quotas(ref.tenant).maxStoredBytes)) return;
    const due = this.measuring.get(ref.tenant);
    if (due) {
      due.sessionIds.add(ref.sessionId);
      return;
    }
    const timer = setTimeout(() => this.measureDue(ref.tenant), MEASURE_DELAY_MS);
    timer.unref();
    this.measuring.set(ref.tenant, { sessionIds: new Set([ref.sessionId]), timer });
  }

  private measureDue(tenant: string): void {
    const sessionIds = [...(this.measuring.get(tenant)?.sessionIds ?? [])];
    this.measuring.delete(tenant);
    this.stored.refreshAll(tenant, sessionIds).catch((error: unknown) => {
      if (!isStoreUnavailable(error)) this.logger.warn({ err: error, tenant, sessions: sessionIds.length }, 'could not measure sessions');
    });
  }

  /**
   * An unlimited quota (single mode) holds nothing: a slot that cannot be refused needs no count.
   * Without Redis the call goes on unheld: it then answers the store outage itself, as SPEC §2 says
   * (`runtime_unavailable`, or 503), rather than a quota error that would be untrue.
   */
  private async takeStream(tenant: string, max: number): Promise<LeasedSlot | null> {
    if (!Number.isFinite(max)) return UNHELD;
    return this.leases.take(tenant, 'streams', max).catch((error: unknown) => {
      if (isStoreUnavailable(error)) return UNHELD;
      throw error;
    });
  }

  /**
   * `inflight`'s admission: `tokens` of the rate (0 when unlimited; the known refusals were made)
   * and the in-flight slot in one script, unheld as `takeStream` says.
   */
  private async admit(tenant: string, tokens: number): Promise<LeasedSlot> {
    const { rate, burst, maxInflight } = this.quotas(tenant);
    const holder = Number.isFinite(maxInflight) ? randomUUID() : null;
    if (tokens === 0 && holder === null) return UNHELD;
    const admission = await this.ledger
      .admitCall(
        tenant,
        { rate, burst: bucketSize(rate, burst), tokens },
        holder === null ? null : { holder, max: maxInflight, leaseMs: this.leases.leaseMs },
      )
      .catch(failOpen);
    if (!admission) return UNHELD;
    if (admission.admitted) return holder === null ? UNHELD : this.leases.keep(tenant, 'inflight', holder, admission.count);
    if (admission.limit === 'rate') throw this.rateRefused(tenant, tokens, admission.retryAfterMs);
    throw this.refuse(
      tenant,
      'inflight',
      `tenant in-flight exec/wait quota reached (${maxInflight} at once); retry once a call has finished.`,
      SLOT_RETRY_AFTER_SECONDS,
    );
  }

  /** Refuses, without a Redis call, `count` requests the bucket cannot hold or is known empty for. */
  private refuseKnownShort(tenant: string, count: number): void {
    const { rate, burst } = this.quotas(tenant);
    if (Number.isFinite(burst) && count > burst) {
      throw this.refuse(tenant, 'rate', batchOverBurstError(count, burst), Math.max(1, Math.ceil(burst / rate)));
    }
    const known = this.emptyUntil.get(tenant);
    if (known === undefined) return;
    const left = known - Date.now();
    if (left > 0) throw this.refuse(tenant, 'rate', rateError(rate, burst), Math.max(1, Math.ceil(left / 1000)));
    this.emptyUntil.delete(tenant);
  }

  /** Redis refused `count` requests at the rate; their tokens are back in `retryAfterMs`. */
  private rateRefused(tenant: string, count: number, retryAfterMs: number): TenantLimitException {
    const { rate, burst } = this.quotas(tenant);
    // Short of `count` tokens is not empty: a single request may still pass.
    if (count === 1) this.emptyUntil.set(tenant, Date.now() + retryAfterMs);
    return this.refuse(tenant, 'rate', rateError(rate, burst), Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }

  private refuse(tenant: string, limit: 'inflight' | 'streams' | 'rate', error: string, retryAfterSeconds: number): TenantLimitException {
    this.metrics.tenantLimitedOnce(limit, tenant);
    this.logger.debug({ tenant, limit }, 'request refused at a tenant quota');
    return new TenantLimitException(limit, error, retryAfterSeconds);
  }
}

/** A JSON-RPC batch with more messages than the tenant's burst: no wait would let it through. */
export function batchOverBurstError(count: number, burst: number): string {
  return `a batch of ${count} JSON-RPC messages exceeds the tenant's request burst (${burst}); send at most ${burst} messages per POST.`;
}

/** The bucket holds `burst` tokens; an unlimited burst under a finite rate holds a second's worth. */
function bucketSize(rate: number, burst: number): number {
  return Number.isFinite(burst) ? burst : rate;
}

function rateError(rate: number, burst: number): string {
  return `tenant request rate exceeded (${rate}/s, bursts of ${burst}); slow down and retry after the Retry-After seconds.`;
}
