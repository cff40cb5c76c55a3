import type { Redis } from 'ioredis';
import type { KeySpace } from './keys';
import { guard } from './redis';

/**
 * The deployment's MCP tool definitions as workers found them at start-up, shared through Redis
 * so API replicas (which run no MCP clients) can show the same catalog workers execute.
 */
export class DeploymentCatalog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
  ) {}

  async publishMcp(snapshot: { tools: unknown[]; servers: unknown[] }): Promise<void> {
    await guard(() => this.redis.set(this.key(), JSON.stringify(snapshot)));
  }

  async readMcp(): Promise<{ tools: unknown[]; servers: unknown[] }> {
    const raw = await guard(() => this.redis.get(this.key()));
    return raw ? (JSON.parse(raw) as { tools: unknown[]; servers: unknown[] }) : { tools: [], servers: [] };
  }

  private key(): string {
    return `${this.keys.prefix}:deployment:mcp`;
  }
}
