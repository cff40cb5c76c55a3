import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { DeploymentCatalog, MCP_SNAPSHOT_TTL_SECONDS } from './deployment-catalog';
import { deleteKeys, testPrefix, testRedis } from './test-support';
import { WorkerPresence } from './worker-presence';

const prefix = testPrefix('presence');
const keys = new KeySpace(prefix);
let redis: Redis;
let presence: WorkerPresence;

beforeAll(async () => {
  redis = await testRedis('worker-presence');
  presence = new WorkerPresence(redis, keys, { shellHomeTtlSeconds: 120 });
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const registry = () => `${prefix}:worker-queues`;

describe('WorkerPresence', () => {
  it('registers every beating worker with the time it was last alive', async () => {
    const before = Date.now();
    await presence.beat('w-a', 5000);
    expect(await presence.isAlive('w-a')).toBe(true);
    expect(Number(await redis.zscore(registry(), 'w-a'))).toBeGreaterThanOrEqual(before);
    const pttl = await redis.pttl(`${prefix}:alive:w-a`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(5000);

    await redis.zadd(registry(), 1, 'w-a');
    expect(await presence.renew('w-a', 5000)).toBe(true);
    expect(Number(await redis.zscore(registry(), 'w-a'))).toBeGreaterThanOrEqual(before);
  });

  it('lists workers silent since a time, forgets them, and re-registers a queue a job was routed to', async () => {
    await presence.beat('w-b', 5000);
    await redis.zadd(registry(), 10, 'w-gone');
    expect(await presence.silentSince(Date.now() - 60_000, 10)).toEqual(['w-gone']);
    await presence.forget('w-gone');
    expect(await presence.silentSince(Date.now() - 60_000, 10)).toEqual([]);

    await presence.queued('w-gone');
    expect(await presence.silentSince(Date.now() + 1, 10)).toContain('w-gone');
  });

  it('lists the workers silent within a window, the most recently seen first (SPEC §17)', async () => {
    const now = Date.now();
    await redis.zadd(registry(), now - 5000, 'w-lapsed-late', now - 8000, 'w-lapsed-early', now - 120_000, 'w-long-gone');
    await presence.beat('w-live', 5000);
    expect(await presence.silentBetween(now - 60_000, now - 2000, 10)).toEqual(['w-lapsed-late', 'w-lapsed-early']);
    expect(await presence.silentBetween(now - 60_000, now - 2000, 1)).toEqual(['w-lapsed-late']);
    await redis.zrem(registry(), 'w-lapsed-late', 'w-lapsed-early', 'w-long-gone');
  });

  it('gives a shell home a TTL renewed by every claim', async () => {
    await presence.beat('w-c', 5000);
    await presence.claimShellHome('acme', 'session:s1', 'w-c');
    const key = `${prefix}:shellhome:acme:session:s1`;
    expect(await redis.ttl(key)).toBeGreaterThan(0);
    expect(await redis.ttl(key)).toBeLessThanOrEqual(120);
    await redis.expire(key, 5);
    await presence.claimShellHome('acme', 'session:s1', 'w-c');
    expect(await redis.ttl(key)).toBeGreaterThan(100);
    expect(await presence.shellHome('acme', 'session:s1')).toBe('w-c');
  });

  it('the MCP catalog snapshot expires unless a worker keeps it', async () => {
    const catalog = new DeploymentCatalog(redis, keys);
    await catalog.keep();
    expect(await redis.exists(`${prefix}:deployment:mcp`)).toBe(0);
    await catalog.publishMcp({ tools: [], servers: [] });
    const key = `${prefix}:deployment:mcp`;
    expect(await redis.ttl(key)).toBeGreaterThan(0);
    expect(await redis.ttl(key)).toBeLessThanOrEqual(MCP_SNAPSHOT_TTL_SECONDS);
    await redis.expire(key, 5);
    await catalog.keep();
    expect(await redis.ttl(key)).toBeGreaterThan(5);
  });
});
