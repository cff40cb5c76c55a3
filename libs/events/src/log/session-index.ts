import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { readNewestFirst } from './newest-first-page';
import { guard } from '../platform/redis';
import { DEFAULT_EVENTS_SCRIPT_SETTINGS, ScriptLoader } from '../platform/script-loader';

/**
 * Each tenant's sessions by last activity (`<p>:sessions:{<tenant>}`, member = session id, score
 * = ms of its last activity), for the operator listing. Kept beside the append scripts rather
 * than by them, because it lives in the tenant's Cluster slot, not the session's. Activity is what
 * the platform starts: an exec (run requested), a wait (run resumed), a session or tools change,
 * a session-level event; each touches the index on the same connection as its write. The events
 * of a running cell do not: its exec or wait already did, and a touch per tool call would double
 * the Redis commands of a busy run. It lives as long as a session can (session
 * expiry, or a live run's idle limit if longer), and a touch drops the members older than that
 * (whose sessions have expired) at most once a minute per tenant; a listing also drops the ones it
 * finds gone.
 */
/** How often one SessionIndex drops a tenant's expired members: an exec's touch stays one ZADD and one PEXPIRE. */
const TRIM_EVERY_MS = 60_000;

export class SessionIndex {
  /** When this instance last dropped each tenant's expired members (tenants are configured: a small map). */
  private readonly trimmedAt = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader = ScriptLoader.default(),
  ) {}

  /** Records activity of `ref` now; scores only move forward (GT), so a late writer never reorders. */
  async touch(ref: SessionRef, atMs = Date.now()): Promise<void> {
    const key = this.keys.tenantSessions(ref.tenant);
    const lifeMs = this.sessionLifeMs();
    const trim = atMs - (this.trimmedAt.get(ref.tenant) ?? 0) >= TRIM_EVERY_MS;
    if (trim) this.trimmedAt.set(ref.tenant, atMs);
    await guard(() => this.scripts.run(this.redis, 'touch-session-index', [key], [ref.sessionId, atMs, lifeMs, trim ? '1' : '']));
  }

  /**
   * Runs `write` and touches the index alongside it: both are sent together, so the touch costs
   * no extra round trip. A failed touch never fails the write (the index only orders a listing).
   */
  async alongside<T>(ref: SessionRef, write: () => Promise<T>): Promise<T> {
    const touched = this.touch(ref).catch(() => undefined);
    try {
      return await write();
    } finally {
      await touched;
    }
  }

  /** A page of the tenant's session ids, newest activity first. */
  async page(tenant: string, limit: number, cursor?: string): Promise<{ sessionIds: string[]; next: string | null }> {
    const page = await readNewestFirst(this.redis, this.keys.tenantSessions(tenant), limit, cursor);
    return { sessionIds: page.entries.map((e) => e.member), next: page.next };
  }

  /** Drops sessions whose keys are gone (expired) from the tenant's index. */
  async forget(tenant: string, sessionIds: readonly string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    await guard(() => this.redis.zrem(this.keys.tenantSessions(tenant), ...sessionIds));
  }

  private sessionLifeMs(): number {
    const sessionTtl = this.scripts.defined('SESSION_TTL_MS') ?? DEFAULT_EVENTS_SCRIPT_SETTINGS.sessionTtlSeconds * 1000;
    const liveRunIdle = this.scripts.defined('LIVE_RUN_MAX_IDLE_MS') ?? DEFAULT_EVENTS_SCRIPT_SETTINGS.liveRunMaxIdleSeconds * 1000;
    return Math.max(sessionTtl, liveRunIdle);
  }
}
