import type { Redis } from 'ioredis';
import type { AppConfig } from '@codemode/config';
import { KeySpace } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import { createLogger, createWorkerMetrics } from '@codemode/telemetry';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import type { ResidentRuns } from '../runs/resident-runs.service';
import { PresenceHeartbeat } from './presence-heartbeat.service';

/**
 * A worker is ready only while it holds its lease (health controller): until its first beat it is
 * not in the worker registry, and a queue of a worker killed then would never be removed.
 */
const prefix = testPrefix('worker', 'heartbeat');
const keys = new KeySpace(prefix);
const WORKER = 'w-beat';
let redis: Redis;

beforeAll(async () => {
  redis = await testRedis('heartbeat');
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

it('holds its lease only once its first beat is in the registry, and not after it stops', async () => {
  const config = { workerId: WORKER, presenceTtlMs: 1000 } as AppConfig;
  const logger = createLogger({ service: 'test', level: 'silent', version: 'test' });
  const heartbeat = new PresenceHeartbeat(config, logger, new WorkerPresence(redis, keys), {} as ResidentRuns, createWorkerMetrics('test'));
  expect(heartbeat.holdsLease).toBe(false);

  heartbeat.onApplicationBootstrap();
  // The first beat is in flight: not held before both of its writes landed.
  expect(heartbeat.holdsLease).toBe(false);
  const until = Date.now() + 5000;
  while (!heartbeat.holdsLease && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(heartbeat.holdsLease).toBe(true);
  expect(await redis.zscore(keys.workerQueues(), WORKER)).not.toBeNull();
  expect(await redis.exists(keys.workerAlive(WORKER))).toBe(1);

  await heartbeat.stop();
  expect(heartbeat.holdsLease).toBe(false);
  expect(await redis.exists(keys.workerAlive(WORKER))).toBe(0);
});
