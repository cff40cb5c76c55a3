import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { ParkedRunIndex } from './parked-run-index';
import { deleteKeys, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('parked-index');
let redis: Redis;
let index: ParkedRunIndex;

beforeAll(async () => {
  redis = await testRedis('parked-index');
  index = new ParkedRunIndex(redis, new KeySpace(prefix));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('answers the runs due by a time, oldest first; one member per run, rescored and removed', async () => {
  const a = { tenant: 'acme', sessionId: 's:1' };
  const b = { tenant: 'acme', sessionId: 's-2' };
  await index.add(a, 'cm_a', 1000);
  await index.add(b, 'cm_b', 500);
  await index.add(a, 'cm_late', 5000);
  expect(await index.due(1000, 10)).toEqual([
    { ref: b, runId: 'cm_b', dueAt: 500 },
    { ref: a, runId: 'cm_a', dueAt: 1000 },
  ]);
  expect(await index.due(1000, 1)).toEqual([{ ref: b, runId: 'cm_b', dueAt: 500 }]);
  // Parked again: the same member moves to its new expiry.
  await index.add(b, 'cm_b', 4000);
  await index.postpone(a, 'cm_a', 3000);
  expect((await index.due(3500, 10)).map((d) => d.runId)).toEqual(['cm_a']);
  await index.remove(a, 'cm_a');
  expect((await index.due(10_000, 10)).map((d) => d.runId)).toEqual(['cm_b', 'cm_late']);
});
