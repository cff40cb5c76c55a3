import type { QueueOptions } from 'bullmq';
import type { KeySpace, RedisClient } from '@codemode/events';

/**
 * How many entries BullMQ keeps in each queue's own events stream (`<queue>:events`, trimmed
 * approximately). BullMQ's default is 10,000, about 2 MB per queue; nothing here reads those
 * streams (no QueueEvents, no waitUntilFinished), so they only cost memory: 437 B per exec in
 * `npm run bench:redis` before this bound. The short tail is for an operator's XREVRANGE.
 */
export const QUEUE_EVENTS_KEPT = 100;

/** The options of every BullMQ queue this API produces to (it writes them to the queue's meta, which BullMQ's scripts read). */
export function queueOptions(connection: RedisClient, keys: KeySpace, name: string): QueueOptions {
  return { connection, prefix: keys.queuePrefix(name), streams: { events: { maxLen: QUEUE_EVENTS_KEPT } } };
}
