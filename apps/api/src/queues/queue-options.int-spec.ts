import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import { QUEUE_EVENTS_KEPT, queueOptions } from './queue-options';

/**
 * Issue 40 (bytes kept per exec): BullMQ's own events stream of a queue the API produces to keeps
 * about QUEUE_EVENTS_KEPT entries, not BullMQ's 10,000, with real BullMQ scripts doing the trimming.
 */
const prefix = testPrefix('api', 'queue-options');
const keys = new KeySpace(prefix);
const NAME = 'cells-0';
const JOBS = 400;
let redis: Redis;
let queue: Queue;

beforeAll(async () => {
  redis = await testRedis('queue-options');
  queue = new Queue(NAME, queueOptions(redis, keys, NAME));
  await queue.waitUntilReady();
});

afterAll(async () => {
  await queue.close();
  await deleteKeys(redis, keys.queuePrefix(NAME));
  await redis.quit();
});

it(`keeps about ${QUEUE_EVENTS_KEPT} entries of the queue's events stream over ${JOBS} jobs run`, async () => {
  const eventsKey = `${keys.queuePrefix(NAME)}:${NAME}:events`;
  const blocking = redis.duplicate({ maxRetriesPerRequest: null });
  const worker = new Worker(NAME, () => Promise.resolve(), {
    connection: blocking,
    prefix: keys.queuePrefix(NAME),
    concurrency: 8,
  });
  let done = 0;
  const all = new Promise<void>((resolve) => worker.on('completed', () => (++done === JOBS ? resolve() : undefined)));
  await queue.addBulk(Array.from({ length: JOBS }, (_, i) => ({ name: 'run-cell', data: { i }, opts: { removeOnComplete: true } })));
  await all;
  await worker.close();
  await blocking.quit();
  expect(await redis.hget(`${keys.queuePrefix(NAME)}:${NAME}:meta`, 'opts.maxLenEvents')).toBe(String(QUEUE_EVENTS_KEPT));
  // Each job adds several events (added, waiting, active, completed…); XADD MAXLEN ~ trims whole
  // stream nodes of up to 100 entries, so up to one node more than the bound stays.
  const kept = await redis.xlen(eventsKey);
  expect(kept).toBeGreaterThanOrEqual(QUEUE_EVENTS_KEPT);
  expect(kept).toBeLessThanOrEqual(QUEUE_EVENTS_KEPT + 100);
});
