import type { RedisClient } from '@codemode/events';
import { guard, isStoreFull, type KeySpace } from '@codemode/events';

/** SPEC §10 default of CODEMODE_SESSION_TTL_SECONDS: how long a shell home outlives its last claim. */
const DEFAULT_SHELL_HOME_TTL_SECONDS = 2_592_000;

export interface WorkerPresenceOptions {
  /**
   * A scope's shell home expires this long after the last request its worker served for it, like
   * the session it belongs to. @default 2592000 (CODEMODE_SESSION_TTL_SECONDS)
   */
  readonly shellHomeTtlSeconds?: number;
}

/**
 * Who is alive, and which worker serves each shell scope. A worker marks itself alive with a key
 * that expires unless renewed; routing reads it before sending work to a worker's own queue.
 *
 * Every worker that may have a queue of its own is in the worker registry (`<p>:worker-queues`,
 * zset of workerId → ms it was last alive or last sent a job): each beat rescores it, and the API
 * rescores it after routing a job there. A member whose score is older than the removal grace
 * and whose lease is gone names a queue nobody will consume: any worker may remove it.
 */
export class WorkerPresence {
  private readonly shellHomeTtlSeconds: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    options: WorkerPresenceOptions = {},
  ) {
    this.shellHomeTtlSeconds = options.shellHomeTtlSeconds ?? DEFAULT_SHELL_HOME_TTL_SECONDS;
  }

  /** Renews this worker's presence for `ttlMs`. Call from the main thread every few seconds. */
  async beat(workerId: string, ttlMs: number): Promise<void> {
    // Two commands, not a MULTI: the lease and the registry are in different Cluster slots. The
    // registry is rescored by every beat, so one missed write is made good by the next.
    await guard(() => this.redis.set(this.aliveKey(workerId), '1', 'PX', ttlMs));
    await guard(() => this.redis.zadd(this.registryKey(), Date.now(), workerId));
  }

  /**
   * Renews a lease this worker still holds; false when it had already lapsed (the worker was
   * silent longer than `ttlMs`: its runs may have been taken over, so it must not act on them).
   */
  async renew(workerId: string, ttlMs: number): Promise<boolean> {
    // PEXPIRE is one of the commands Redis still runs at `maxmemory` (SET and a MULTI are refused
    // there), so a full Redis does not lapse every lease in the fleet (SPEC §2). The registry's
    // last-seen time is best effort: refused for memory, the lease still holds.
    const [renewed] = await Promise.all([
      guard(() => this.redis.pexpire(this.aliveKey(workerId), ttlMs)),
      guard(() => this.redis.zadd(this.registryKey(), Date.now(), workerId)).catch((error: unknown) => {
        if (!isStoreFull(error)) throw error;
      }),
    ]);
    return renewed === 1;
  }

  async leave(workerId: string): Promise<void> {
    await guard(() => this.redis.del(this.aliveKey(workerId)));
  }

  async isAlive(workerId: string): Promise<boolean> {
    return (await guard(() => this.redis.exists(this.aliveKey(workerId)))) === 1;
  }

  /** The live worker serving a shell scope, or null when it has none (or it died). */
  async shellHome(tenant: string, scopeKey: string): Promise<string | null> {
    const home = await guard(() => this.redis.get(this.homeKey(tenant, scopeKey)));
    return home !== null && (await this.isAlive(home)) ? home : null;
  }

  /** Makes `workerId` the scope's home, for shellHomeTtlSeconds from now (every request renews it). */
  async claimShellHome(tenant: string, scopeKey: string, workerId: string): Promise<void> {
    await guard(() => this.redis.set(this.homeKey(tenant, scopeKey), workerId, 'EX', this.shellHomeTtlSeconds));
  }

  /** Remembers a shell process session id, so `wait` can tell a confused caller to use `process`. */
  async rememberShellSession(tenant: string, shellSessionId: string, ttlSeconds: number): Promise<void> {
    await guard(() => this.redis.set(this.shellIdKey(tenant, shellSessionId), '1', 'EX', ttlSeconds));
  }

  async isShellSession(tenant: string, id: string): Promise<boolean> {
    return (await guard(() => this.redis.exists(this.shellIdKey(tenant, id)))) === 1;
  }

  /**
   * A job was just routed to `workerId`'s queue: the queue exists (again), so it stays in the
   * registry until someone removes it. Call after the job is added (see `forget`).
   */
  async queued(workerId: string): Promise<void> {
    await guard(() => this.redis.zadd(this.registryKey(), Date.now(), workerId));
  }

  /** Up to `limit` registered workers last seen before `beforeMs`, oldest first. */
  async silentSince(beforeMs: number, limit: number): Promise<string[]> {
    return guard(() => this.redis.zrangebyscore(this.registryKey(), 0, beforeMs, 'LIMIT', 0, limit));
  }

  /**
   * Up to `limit` registered workers last seen between `fromMs` and `beforeMs`, the most recently
   * seen first: those whose lease has just lapsed (SPEC §17), before the ones silent for longer.
   */
  async silentBetween(fromMs: number, beforeMs: number, limit: number): Promise<string[]> {
    return guard(() => this.redis.zrevrangebyscore(this.registryKey(), beforeMs, fromMs, 'LIMIT', 0, limit));
  }

  /**
   * Drops a worker from the registry. Call before removing its queue: a job routed there
   * meanwhile is either removed with the queue or registers the queue again (`queued` runs after
   * the add), so no queue is left unregistered.
   */
  async forget(workerId: string): Promise<void> {
    await guard(() => this.redis.zrem(this.registryKey(), workerId));
  }

  private shellIdKey(tenant: string, id: string): string {
    return this.keys.shellSessionId(tenant, id);
  }

  private aliveKey(workerId: string): string {
    return this.keys.workerAlive(workerId);
  }

  private homeKey(tenant: string, scopeKey: string): string {
    return this.keys.shellHome(tenant, scopeKey);
  }

  private registryKey(): string {
    return this.keys.workerQueues();
  }
}
