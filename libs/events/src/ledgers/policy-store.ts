import { PolicySchema, type Policy, type SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { StoreCommandError } from '../platform/errors';
import type { KeySpace } from '../platform/keys';
import { guard } from '../platform/redis';

/**
 * Tool policies (SPEC §11): the tenant's, which an operator wrote on purpose and which therefore
 * never expires (SPEC §10), and each session's, which lives as long as its session (the append
 * path refreshes its TTL with the session's other keys).
 */
export class PolicyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async tenant(tenant: string): Promise<Policy | null> {
    return parsePolicy(await guard(() => this.redis.get(this.keys.tenantPolicy(tenant))));
  }

  async putTenant(tenant: string, policy: Policy): Promise<Policy> {
    await guard(() => this.redis.set(this.keys.tenantPolicy(tenant), JSON.stringify(policy)));
    return policy;
  }

  async session(ref: SessionRef): Promise<Policy | null> {
    return parsePolicy(await guard(() => this.redis.get(this.keys.sessionPolicy(ref))));
  }

  /**
   * Stores the session's policy with the session's own remaining TTL (the session exists: its
   * `PUT` wrote it just before); `fallbackTtlMs` when it has none.
   */
  async putSession(ref: SessionRef, policy: Policy, fallbackTtlMs: number): Promise<Policy> {
    const left = await guard(() => this.redis.pttl(this.keys.session(ref)));
    const ttl = left > 0 ? left : fallbackTtlMs;
    await guard(() => this.redis.set(this.keys.sessionPolicy(ref), JSON.stringify(policy), 'PX', ttl));
    return policy;
  }

  /** Removes the session's own policy: its cells run under the tenant's alone. */
  async clearSession(ref: SessionRef): Promise<null> {
    await guard(() => this.redis.del(this.keys.sessionPolicy(ref)));
    return null;
  }

  /** Both policies of a session in one round trip: `[tenant, session]`. */
  async both(ref: SessionRef): Promise<[Policy | null, Policy | null]> {
    const tenantJson = this.redis.get(this.keys.tenantPolicy(ref.tenant));
    const sessionJson = this.redis.get(this.keys.sessionPolicy(ref));
    const [tenant, session] = await guard(() => Promise.all([tenantJson, sessionJson]));
    return [parsePolicy(tenant), parsePolicy(session)];
  }
}

function parsePolicy(json: string | null): Policy | null {
  if (json === null) return null;
  const parsed = PolicySchema.safeParse(JSON.parse(json));
  if (!parsed.success) throw new StoreCommandError(`stored policy does not parse: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}
