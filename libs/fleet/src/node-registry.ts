import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { NODE_LIMITS, type NodeConnectInput, type NodeView } from '@codemode/contracts';
import { guard, type KeySpace, type RedisClient, type ScriptLoader } from '@codemode/events';
import type { FleetScriptName } from './scripts';

/**
 * How long a node counts as connected after its API last vouched for the connection. The API beats
 * every NODE_BEAT_MS, so a node whose API died shows as disconnected within the lease.
 */
export const NODE_LEASE_MS = 15_000;
export const NODE_BEAT_MS = 5_000;

/**
 * Published on a node's inbox: its holder closes the connection, because another connection took
 * the node (`by` its token: that connection ignores it, should it already listen when it arrives),
 * or because it was removed (the node is told, so it stops instead of pairing anew).
 */
export const closeMessages = {
  superseded: (byToken: string) => JSON.stringify({ close: 'superseded', by: byToken }),
  removed: JSON.stringify({ close: 'removed' }),
} as const;

/** A close message's meaning, or undefined for an invocation. */
export function readCloseMessage(message: string): { close: 'superseded'; by: string } | { close: 'removed' } | undefined {
  if (!message.startsWith('{"close"')) return undefined;
  return JSON.parse(message) as { close: 'superseded'; by: string } | { close: 'removed' };
}

/** A paired node as the registry keeps it (the secret only as a hash). */
export interface NodeRecord {
  readonly id: string;
  readonly name: string;
  readonly platform: string;
  readonly commands: readonly string[];
  readonly connectedAt: string;
  readonly lastSeenAt: string;
  readonly connected: boolean;
}

/** Why a pairing was refused. */
export type PairingRefusal = { kind: 'held' } | { kind: 'operator_paired' } | { kind: 'too_many'; max: number };

/** A connection that now holds its node: `secret` is what the node presents to reconnect as itself. */
export interface NodeHold {
  readonly nodeId: string;
  readonly secret: string;
  readonly token: string;
}

/**
 * The tenant's paired nodes (SPEC §15) and which connection holds each: pairing and reconnection
 * (connect-node.lua decides who may hold a node), the holder's beats, disconnection, listing and
 * removal. One hash per tenant; a node's connection is a key that expires unless its API beats it,
 * so a node whose API died reads as disconnected within NODE_LEASE_MS.
 */
export class NodeRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader<FleetScriptName>,
  ) {}

  /** Pairs or re-establishes the node; the connection holds it until it drops or is superseded. */
  async connect(tenant: string, input: NodeConnectInput, role: 'operator' | 'agent' = 'operator'): Promise<NodeHold | PairingRefusal> {
    const fresh = randomBytes(24).toString('base64url');
    const token = randomUUID();
    const [code, value, secret] = (await guard(() =>
      this.scripts.run(
        this.redis,
        'connect-node',
        [this.keys.tenantNodes(tenant)],
        [
          `nd_${randomUUID()}`,
          input.name,
          input.platform,
          JSON.stringify(input.commands),
          input.id ?? '',
          input.secret === undefined ? '' : secretHash(input.secret),
          secretHash(fresh),
          token,
          new Date().toISOString(),
          NODE_LEASE_MS,
          NODE_LIMITS.perTenant,
          role,
        ],
      ),
    )) as [number, string | number, string?];
    if (code === 0) return value === 'operator' ? { kind: 'operator_paired' } : { kind: 'held' };
    if (code === -1) return { kind: 'too_many', max: NODE_LIMITS.perTenant };
    return { nodeId: String(value), secret: secret === 'kept' ? input.secret! : fresh, token };
  }

  /** Renews the hold; false when the connection no longer holds the node (it must close). */
  async beat(tenant: string, hold: NodeHold): Promise<boolean> {
    const held = await guard(() =>
      this.scripts.run(
        this.redis,
        'beat-node',
        [this.keys.tenantNodes(tenant), this.keys.nodeConnection(tenant, hold.nodeId)],
        [hold.nodeId, hold.token, NODE_LEASE_MS, new Date().toISOString()],
      ),
    );
    return held === 1;
  }

  /** The connection closed: the node reads as disconnected unless another connection took it. */
  async drop(tenant: string, hold: NodeHold): Promise<void> {
    await guard(() =>
      this.scripts.run(
        this.redis,
        'drop-node',
        [this.keys.tenantNodes(tenant), this.keys.nodeConnection(tenant, hold.nodeId)],
        [hold.nodeId, hold.token, new Date().toISOString()],
      ),
    );
  }

  /** The tenant's nodes, by name. */
  async list(tenant: string): Promise<NodeRecord[]> {
    const all = await guard(() => this.redis.hgetall(this.keys.tenantNodes(tenant)));
    const ids = Object.keys(all);
    if (ids.length === 0) return [];
    // One slot (the tenant's tag), so one round trip on a cluster too.
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(this.keys.nodeConnection(tenant, id));
    const live = (await guard(() => pipeline.exec())) ?? [];
    const records = ids.map((id, i) => toRecord(all[id], live[i]?.[1] === 1));
    return records.filter((r): r is NodeRecord => r !== undefined).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** SPEC §15 `nodes.get`: an exact id first, then a display name. */
  async resolve(tenant: string, idOrName: string): Promise<NodeRecord | undefined> {
    const nodes = await this.list(tenant);
    return nodes.find((n) => n.id === idOrName) ?? nodes.find((n) => n.name === idOrName);
  }

  /** The channel the node's invocations go on; only its holder subscribes to it. */
  inboxOf(tenant: string, nodeId: string): string {
    return this.keys.nodeInbox(tenant, nodeId);
  }

  /** Tells whatever connection held the node before `hold` to close (published before `hold` listens). */
  async supersede(tenant: string, hold: NodeHold): Promise<void> {
    await guard(() => this.redis.spublish(this.inboxOf(tenant, hold.nodeId), closeMessages.superseded(hold.token)));
  }

  /** Unpairs the node; its connection, if any, is told to close. @returns false when there was none */
  async remove(tenant: string, nodeId: string): Promise<boolean> {
    const [[, removed]] = ((await guard(() =>
      this.redis.multi().hdel(this.keys.tenantNodes(tenant), nodeId).del(this.keys.nodeConnection(tenant, nodeId)).exec(),
    )) ?? [[null, 0]]) as [[unknown, number]];
    if (removed !== 1) return false;
    await guard(() => this.redis.spublish(this.inboxOf(tenant, nodeId), closeMessages.removed));
    return true;
  }
}

/** What `GET /v1/nodes` and `nodes.list()` show of a record. */
export function nodeView(record: NodeRecord): NodeView {
  return {
    id: record.id,
    name: record.name,
    platform: record.platform,
    connected: record.connected,
    commands: [...record.commands],
    ...(record.connected ? { connectedAt: record.connectedAt } : {}),
    lastSeenAt: record.lastSeenAt,
  };
}

function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function toRecord(json: string, connected: boolean): NodeRecord | undefined {
  try {
    const raw = JSON.parse(json) as Record<string, unknown>;
    if (typeof raw.id !== 'string' || typeof raw.name !== 'string') return undefined;
    return {
      id: raw.id,
      name: raw.name,
      platform: typeof raw.platform === 'string' ? raw.platform : '',
      // cjson writes an empty array as {}.
      commands: Array.isArray(raw.commands) ? raw.commands.filter((c): c is string => typeof c === 'string') : [],
      connectedAt: typeof raw.connectedAt === 'string' ? raw.connectedAt : '',
      lastSeenAt: typeof raw.lastSeenAt === 'string' ? raw.lastSeenAt : '',
      connected,
    };
  } catch {
    return undefined;
  }
}
