import type { RedisClient } from '@codemode/events';
import { guard, type KeySpace } from '@codemode/events';

/**
 * The snapshot outlives the last worker that kept it by this much: every running worker renews it
 * (`keep`) once per lease, so it vanishes only an hour after the deployment's last worker is gone.
 */
export const MCP_SNAPSHOT_TTL_SECONDS = 3600;

/**
 * The deployment's MCP tool definitions as workers found them at start-up, shared through Redis
 * so API replicas (which run no MCP clients) can show the same catalog workers execute.
 */
export class DeploymentCatalog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async publishMcp(snapshot: { tools: unknown[]; servers: unknown[] }): Promise<void> {
    await guard(() => this.redis.set(this.key(), JSON.stringify(snapshot), 'EX', MCP_SNAPSHOT_TTL_SECONDS));
  }

  /** Renews the published snapshot's TTL (no-op when none is published). */
  async keep(): Promise<void> {
    await guard(() => this.redis.expire(this.key(), MCP_SNAPSHOT_TTL_SECONDS));
  }

  async readMcp(): Promise<{ tools: unknown[]; servers: unknown[] }> {
    const raw = await guard(() => this.redis.get(this.key()));
    return raw ? (JSON.parse(raw) as { tools: unknown[]; servers: unknown[] }) : { tools: [], servers: [] };
  }

  private key(): string {
    return this.keys.deploymentMcp();
  }
}
