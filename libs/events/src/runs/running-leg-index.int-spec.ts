import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { keySlot } from '../platform/cluster-slots';
import { RunningLegIndex } from './running-leg-index';
import { deleteKeys, testPrefix, testRedis } from '../test-support';

/** SPEC §17: the running restartSafe legs of each worker, by owner, in the owner's own slot. */
const prefix = testPrefix('running-legs');
const keys = new KeySpace(prefix);
let redis: Redis;
let index: RunningLegIndex;

beforeAll(async () => {
  redis = await testRedis('running-legs');
  index = new RunningLegIndex(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const a = { tenant: 'acme', sessionId: 's:1' };
const b = { tenant: 'beta', sessionId: 's-2' };

test('adds, reads and removes legs by owner; an owner with no leg left has no key', async () => {
  await index.add('w-1', { ref: a, runId: 'cm_a', replyTo: 'reply:api-1', answeredBy: 1000 });
  await index.add('w-1', { ref: b, runId: 'cm_b', replyTo: 'reply:api-2', answeredBy: 2000 });
  await index.add('w-2', { ref: a, runId: 'cm_c', replyTo: 'reply:api-1', answeredBy: 3000 });
  const byRun = (legs: { runId: string }[]) => [...legs].sort((x, y) => x.runId.localeCompare(y.runId));
  expect(byRun(await index.legsOf('w-1', 10))).toEqual([
    { ref: a, runId: 'cm_a', replyTo: 'reply:api-1', answeredBy: 1000 },
    { ref: b, runId: 'cm_b', replyTo: 'reply:api-2', answeredBy: 2000 },
  ]);
  expect(await index.legsOf('w-2', 10)).toEqual([{ ref: a, runId: 'cm_c', replyTo: 'reply:api-1', answeredBy: 3000 }]);
  expect(await index.legsOf('w-3', 10)).toEqual([]);
  // A leg taken again (a resume on the same owner) is one entry, with its new caller.
  await index.add('w-1', { ref: a, runId: 'cm_a', replyTo: 'reply:api-3', answeredBy: 4000 });
  expect((await index.legsOf('w-1', 10)).find((leg) => leg.runId === 'cm_a')).toMatchObject({ replyTo: 'reply:api-3', answeredBy: 4000 });
  expect(await index.legsOf('w-1', 1)).toHaveLength(1);

  await index.remove('w-1', a, 'cm_a');
  await index.remove('w-1', b, 'cm_b');
  expect(await index.legsOf('w-1', 10)).toEqual([]);
  expect(await redis.exists(keys.runningLegs('w-1'))).toBe(0);
  await index.remove('w-2', a, 'cm_c');
});

test("each owner's legs sit in the owner's own slot, apart from the sessions' and other owners'", () => {
  expect(keys.runningLegs('w-1')).toBe(`${prefix}:running-legs:{${prefix}:owner:w-1}`);
  expect(keySlot(keys.runningLegs('w-1'))).toBe(keySlot(`{${prefix}:owner:w-1}`));
  expect(keySlot(keys.runningLegs('w-1'))).not.toBe(keySlot(keys.runningLegs('w-2')));
});

test('an entry that cannot be read is dropped by its reader', async () => {
  await index.add('w-4', { ref: a, runId: 'cm_ok', replyTo: 'reply:api-1', answeredBy: 1 });
  await redis.hset(keys.runningLegs('w-4'), 'not json', '[]');
  expect(await index.legsOf('w-4', 10)).toEqual([{ ref: a, runId: 'cm_ok', replyTo: 'reply:api-1', answeredBy: 1 }]);
  expect(await redis.hkeys(keys.runningLegs('w-4'))).toEqual([JSON.stringify(['acme', 's:1', 'cm_ok'])]);
  await index.remove('w-4', a, 'cm_ok');
});

test("a departed owner's entries go at once (no key lives forever)", async () => {
  await index.add('w-5', { ref: a, runId: 'cm_left', replyTo: 'r', answeredBy: 1 });
  await index.add('w-6', { ref: a, runId: 'cm_kept', replyTo: 'r', answeredBy: 1 });
  await index.drop('w-5');
  expect(await redis.exists(keys.runningLegs('w-5'))).toBe(0);
  expect((await index.legsOf('w-6', 10)).map((leg) => leg.runId)).toEqual(['cm_kept']);
  await index.drop('w-6');
});
