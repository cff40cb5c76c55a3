import type { Redis } from 'ioredis';
import type { KeySpace } from './keys';
import { guard } from './redis';

/**
 * Who is alive, and which worker serves each shell scope. A worker marks itself alive with a key
 * that expires unless renewed; routing reads it before sending work to a worker's own queue.
 */
export class WorkerPresence {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
  ) {}

  /** Renews this worker's presence for `ttlMs`. Call from the main thread every few seconds. */
  async beat(workerId: string, ttlMs: number): Promise<void> {
    await guard(() => this.redis.set(this.aliveKey(workerId), '1', 'PX', ttlMs));
  }

  /**
   * Renews a lease this worker still holds; false when it had already lapsed (the worker was
   * silent longer than `ttlMs`: its runs may have been taken over, so it must not act on them).
   */
  async renew(workerId: string, ttlMs: number): Promise<boolean> {
    return (await guard(() => this.redis.set(this.aliveKey(workerId), '1', 'PX', ttlMs, 'XX'))) === 'OK';
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

  async claimShellHome(tenant: string, scopeKey: string, workerId: string): Promise<void> {
    await guard(() => this.redis.set(this.homeKey(tenant, scopeKey), workerId));
  }

  /** Remembers a shell process session id, so `wait` can tell a confused caller to use `process`. */
  async rememberShellSession(tenant: string, shellSessionId: string, ttlSeconds: number): Promise<void> {
    await guard(() => this.redis.set(this.shellIdKey(tenant, shellSessionId), '1', 'EX', ttlSeconds));
  }

  async isShellSession(tenant: string, id: string): Promise<boolean> {
    return (await guard(() => this.redis.exists(this.shellIdKey(tenant, id)))) === 1;
  }

  private shellIdKey(tenant: string, id: string): string {
    return `${this.keys.prefix}:shellid:${tenant}:${id}`;
  }

  private aliveKey(workerId: string): string {
    return `${this.keys.prefix}:alive:${workerId}`;
  }

  private homeKey(tenant: string, scopeKey: string): string {
    return `${this.keys.prefix}:shellhome:${tenant}:${scopeKey}`;
  }
}
