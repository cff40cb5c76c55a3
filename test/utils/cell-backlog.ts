import type { Cluster, Redis } from 'ioredis';

/**
 * Cells a stack's shards still hold, on either dispatch path (CODEMODE_CELL_DISPATCH): BullMQ cell
 * jobs waiting, prioritized or active, and stream entries on both lanes (an entry is deleted once
 * acknowledged, so one left is waiting or still held). Every key is in its shard's hash tag.
 */
export async function cellsLeft(redis: Redis | Cluster, prefix: string, shards = 16): Promise<number> {
  let left = 0;
  for (let shard = 0; shard < shards; shard += 1) {
    const tag = `{${prefix}:cells-${shard}}`;
    const queue = `${tag}:cells-${shard}`;
    const counts = await Promise.all([
      redis.llen(`${queue}:wait`),
      redis.zcard(`${queue}:prioritized`),
      redis.llen(`${queue}:active`),
      redis.xlen(`${tag}:stream`),
      redis.xlen(`${tag}:stream:rest`),
    ]);
    left += counts.reduce((a, b) => a + b, 0);
  }
  return left;
}
