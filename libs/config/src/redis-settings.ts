import { ConfigError } from './errors';

type Env = Record<string, string | undefined>;

/** A seed node of a Redis Cluster. */
export interface RedisNodeAddress {
  readonly host: string;
  readonly port: number;
}

/** Where the service's one stateful dependency is (SPEC §9, §13). */
export interface RedisSettings {
  /** `REDIS_URL` [redis://127.0.0.1:6379]: one Redis; ignored when `clusterNodes` is set. */
  readonly url: string;
  /** `REDIS_CLUSTER_NODES`: seed nodes of a Redis Cluster; null for one Redis. */
  readonly clusterNodes: readonly RedisNodeAddress[] | null;
  /** `REDIS_USERNAME` / `REDIS_PASSWORD`: credentials for every node (else those of the URLs). */
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** `CODEMODE_QUEUE_SHARDS` [16]: BullMQ queues the cell queue is split into, each under its own hash tag. */
  readonly queueShards: number;
  /**
   * `CODEMODE_CELL_DISPATCH` [stream]: how a new cell travels to a worker: an entry on its shard's
   * Redis Streams (SPEC §13), or `bullmq`, a job on its shard's BullMQ queue (the path before; a
   * worker runs those jobs either way, so an upgrade drains them). Replays stay on BullMQ.
   */
  readonly cellDispatch: CellDispatchMode;
}

export const CELL_DISPATCH_MODES = ['bullmq', 'stream'] as const;
export type CellDispatchMode = (typeof CELL_DISPATCH_MODES)[number];

const DEFAULT_QUEUE_SHARDS = 16;
const MAX_QUEUE_SHARDS = 1024;

/** Reads the Redis settings; throws ConfigError naming a malformed variable. */
export function readRedisSettings(env: Env): RedisSettings {
  const seeds = parseClusterNodes(env.REDIS_CLUSTER_NODES);
  return {
    url: env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379',
    clusterNodes: seeds ? seeds.map(({ host, port }) => ({ host, port })) : null,
    username: env.REDIS_USERNAME?.trim() || seeds?.find((s) => s.username)?.username,
    password: env.REDIS_PASSWORD || seeds?.find((s) => s.password)?.password,
    queueShards: readShards(env.CODEMODE_QUEUE_SHARDS),
    cellDispatch: readCellDispatch(env.CODEMODE_CELL_DISPATCH),
  };
}

interface SeedNode extends RedisNodeAddress {
  username?: string;
  password?: string;
}

function parseClusterNodes(raw: string | undefined): SeedNode[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  return raw.split(',').map((entry) => parseSeed(entry.trim()));
}

function parseSeed(entry: string): SeedNode {
  const url = tryUrl(/^rediss?:\/\//.test(entry) ? entry : `redis://${entry}`);
  const port = Number(url?.port || 6379);
  if (!url || url.hostname === '' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigError('REDIS_CLUSTER_NODES', `must be comma-separated host:port or redis://[user:password@]host:port, got "${entry}".`);
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
  };
}

function tryUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function readShards(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_QUEUE_SHARDS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_QUEUE_SHARDS) {
    throw new ConfigError('CODEMODE_QUEUE_SHARDS', `must be an integer from 1 to ${MAX_QUEUE_SHARDS}, got "${raw}".`);
  }
  return value;
}

function readCellDispatch(raw: string | undefined): CellDispatchMode {
  const value = raw?.trim() || 'stream';
  const mode = CELL_DISPATCH_MODES.find((m) => m === value);
  if (!mode) throw new ConfigError('CODEMODE_CELL_DISPATCH', `must be one of ${CELL_DISPATCH_MODES.join(', ')}, got "${raw}".`);
  return mode;
}

/**
 * Where Redis is, for a log line (SPEC §19: "which Redis"): `host:port` of the one Redis or of
 * each cluster seed, never a username or password from a URL.
 */
export function redisAddress(redis: RedisSettings): string {
  if (redis.clusterNodes) return `cluster ${redis.clusterNodes.map(({ host, port }) => `${host}:${port}`).join(',')}`;
  try {
    const url = new URL(redis.url);
    return `${url.hostname}:${url.port || '6379'}`;
  } catch {
    return 'unparsable REDIS_URL';
  }
}
