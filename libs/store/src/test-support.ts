import { randomBytes, randomUUID } from 'node:crypto';
import type { Limits } from '@codemode/contracts';
import { createRedis, waitUntilReady } from '@codemode/events';
import type { Redis } from 'ioredis';

/** Test-only helpers for the *.int-spec.ts files of this library. */
export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** A key prefix no other test file (or agent) shares. */
export function testPrefix(name: string): string {
  return `t-store-${name}-${randomBytes(4).toString('hex')}`;
}

export async function testRedis(name: string): Promise<Redis> {
  const redis = createRedis(TEST_REDIS_URL, { name });
  await waitUntilReady(redis);
  return redis;
}

/** Deletes every key under `prefix` (never FLUSH: the Redis is shared). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

export const newRunId = (): string => `cm_${randomUUID()}`;

export const LIMITS: Limits = {
  timeoutMs: 10000,
  memoryLimitBytes: 67108864,
  maxOutputBytes: 65536,
  maxSnapshotBytes: 10485760,
  maxPendingToolCalls: 16,
  snapshotTtlSeconds: 900,
  searchDefaultLimit: 8,
  maxSearchLimit: 50,
  resultsTtlSeconds: 3600,
};
