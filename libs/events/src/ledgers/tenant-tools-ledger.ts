import { MAX_TENANT_TOOLS } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { LUA_CODES } from '../platform/lua-errors';
import { execMulti, guard, primaries } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';

/** A tenant tool stored, or refused at the tenant's count cap (`stored: false`); `count`: the tenant's tools now. */
export interface TenantToolPut {
  stored: boolean;
  count: number;
}

/** The tenant's tools as stored (name → JSON, never decoded here) and the version they are at. */
export interface TenantToolsRead {
  version: string;
  tools: [name: string, json: Buffer][];
}

/**
 * The tenant's tools (SPEC §18): a hash of name → tool JSON in the tenant's slot, never expiring
 * (an operator wrote them), beside a meta hash whose `version` every change bumps. What is derived
 * from them (a session's catalog, its exec description) is kept under that version, so a change is
 * seen at once and an unchanged tenant's tools are never read again (SPEC §10 "Fate isolation").
 */
export class TenantToolsLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {}

  /** Stores one tool's JSON (the name and tool already checked); a new name past MAX_TENANT_TOOLS is refused, atomically. */
  async put(tenant: string, name: string, json: string): Promise<TenantToolPut> {
    const [code, count] = await this.run(tenant, ['put', name, json, String(MAX_TENANT_TOOLS)]);
    return { stored: code === LUA_CODES.ok, count };
  }

  /** Removes one tool; answers whether it existed. */
  async delete(tenant: string, name: string): Promise<boolean> {
    const [code] = await this.run(tenant, ['delete', name]);
    return code === LUA_CODES.ok;
  }

  /** Replaces one tool's JSON only if it is still `read` (secrets:rotate); answers whether it did. */
  async replace(tenant: string, name: string, json: string, read: string): Promise<boolean> {
    const [code] = await this.run(tenant, ['replace', name, json, read]);
    return code === LUA_CODES.ok;
  }

  /**
   * Every tenant that has tools, by SCAN of their keys (on a cluster, of every primary): for
   * `npm run secrets:rotate`, an operator's command, never a request's path.
   */
  async *tenants(): AsyncGenerator<string> {
    const pattern = `${this.keys.tenantTools('x').slice(0, -'{x}'.length)}{*}`;
    for (const node of primaries(this.redis)) {
      let cursor = '0';
      do {
        const [next, found] = await guard(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', 500));
        cursor = next;
        for (const key of found) yield key.slice(key.lastIndexOf('{') + 1, -1);
      } while (cursor !== '0');
    }
  }

  /** One tool's JSON, or null. */
  async get(tenant: string, name: string): Promise<string | null> {
    return guard(() => this.redis.hget(this.keys.tenantTools(tenant), name));
  }

  /** The version of the tenant's tools: '' before any was ever stored. One HGET. */
  async version(tenant: string): Promise<string> {
    return (await guard(() => this.redis.hget(this.keys.tenantToolsMeta(tenant), 'version'))) ?? '';
  }

  /** Bytes the tenant's tools hold (names and JSON), what they count in its stored bytes. */
  async bytes(tenant: string): Promise<number> {
    return Number((await guard(() => this.redis.hget(this.keys.tenantToolsMeta(tenant), 'bytes'))) ?? 0);
  }

  /**
   * Every tool with the version they are at, in one MULTI: HKEYS and HVALS (the same order), never
   * HGETALL's object, in which a tool named `__proto__` would be lost. Values stay bytes.
   */
  async read(tenant: string): Promise<TenantToolsRead> {
    const key = this.keys.tenantTools(tenant);
    const multi = this.redis.multi().hget(this.keys.tenantToolsMeta(tenant), 'version').hkeys(key).hvalsBuffer(key);
    const [version, names, values] = (await execMulti(multi)) as [string | null, string[], Buffer[]];
    return { version: version ?? '', tools: names.map((name, i) => [name, values[i]]) };
  }

  private async run(tenant: string, args: string[]): Promise<[number, number]> {
    const keys = [this.keys.tenantTools(tenant), this.keys.tenantToolsMeta(tenant)];
    const [code, count] = (await guard(() => this.scripts.run(this.redis, 'tenant-tool', keys, args))) as [number, number];
    return [Number(code), Number(count)];
  }
}
