import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedis, waitUntilReady } from '@codemode/events';

/** Test-only helpers for *.int-spec.ts files that talk to the shared local Redis. */
export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** A key prefix no other test file (or agent) shares. */
export function testPrefix(owner: string, name: string): string {
  return `t-${owner}-${name}-${randomBytes(4).toString('hex')}`;
}

export async function testRedis(name: string): Promise<Redis> {
  const redis = createRedis(TEST_REDIS_URL, { name }) as Redis;
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
