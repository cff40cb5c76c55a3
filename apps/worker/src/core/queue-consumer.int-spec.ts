import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { readRedisSettings, type AppConfig } from '@codemode/config';
import { KeySpace } from '@codemode/events';
import { createLogger } from '@codemode/telemetry';
import { deleteKeys, testPrefix, testRedis, TEST_REDIS_URL } from '../../../../test/utils/redis-test-keys';
import { QueueConsumer } from './queue-consumer';

/**
 * SPEC §10 fate isolation with SPEC §6: a job whose handler answers `Detached` leaves the
 * consumer's concurrency at once, yet stays active with its lock (the worker's lease) renewed past
 * its lock duration until its work ends, and is then completed.
 */
const prefix = testPrefix('worker', 'detach');
const keys = new KeySpace(prefix);
const QUEUE = 'detach';
const LOCK_MS = 1000;
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let redis: Redis;
let queue: Queue;

beforeAll(async () => {
  redis = await testRedis('detach');
  queue = new Queue(QUEUE, { connection: redis, prefix: keys.queuePrefix(QUEUE) });
});

afterAll(async () => {
  await queue.close();
  await deleteKeys(redis, keys.queuePrefix(QUEUE));
  await redis.quit();
});

it('lets a detached job go from its slot, keeps it locked while its work runs, then completes it', async () => {
  const config = {
    keyPrefix: prefix,
    workerId: 'w-detach',
    presenceTtlMs: LOCK_MS,
    redis: readRedisSettings({ REDIS_URL: TEST_REDIS_URL }),
  } as AppConfig;
  const logger = createLogger({ service: 'test', level: 'silent', version: 'test' });
  let finishHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (finishHeld = resolve));
  const handled: string[] = [];
  // One slot: the second job runs only because the first let its slot go.
  const consumer = new QueueConsumer(config, logger, { queues: [QUEUE], role: 'test', concurrency: 1, maxStalledCount: 0 }, (job) => {
    handled.push(job.name);
    return Promise.resolve(job.name === 'held' ? { goesOn: held } : undefined);
  });
  try {
    const first = await queue.add('held', {});
    await queue.add('quick', {});
    const until = Date.now() + 10_000;
    while (handled.length < 2 && Date.now() < until) await tick(20);
    expect(handled).toEqual(['held', 'quick']);
    // Three lock durations later it is still active and locked: no worker may take it as stalled.
    await tick(3 * LOCK_MS);
    expect(await queue.getJobState(first.id!)).toBe('active');
    expect(await redis.exists(`${keys.queuePrefix(QUEUE)}:${QUEUE}:${first.id}:lock`)).toBe(1);
    finishHeld();
    const done = Date.now() + 5000;
    while ((await queue.getJobState(first.id!)) === 'active' && Date.now() < done) await tick(20);
    expect(await queue.getJobState(first.id!)).toBe('completed');
  } finally {
    await consumer.close();
  }
});
