import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { SessionLedger } from '../ledgers/session-ledger';
import { SessionRemoval } from '../ledgers/session-removal';
import { McpTaskStore } from './mcp-task-store';
import { completed, deleteKeys, failed, testPrefix, testRedis } from '../test-support';

/** SPEC §14 Tasks: the task store, in the session's slot of a real Redis. */
const prefix = testPrefix('mcp-tasks');
const keys = new KeySpace(prefix);
let redis: Redis;
let store: McpTaskStore;

beforeAll(async () => {
  redis = await testRedis('mcp-tasks');
  store = new McpTaskStore(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const a = { tenant: 'acme', sessionId: 's-1' };
const other = { tenant: 'beta', sessionId: 's-1' };
const task = { kind: 'exec' as const, awaitResults: false, ttlMs: 60_000, liveMs: 600_000 };

test('a created task reads back working; its first answer stays; its key then lives its ttl from the end', async () => {
  await store.create(a, { ...task, taskId: 'cm_1', runId: 'cm_1' }, 1000);
  const created = await store.read(a, 'cm_1');
  expect(created).toEqual({
    taskId: 'cm_1',
    kind: 'exec',
    runId: 'cm_1',
    awaitResults: false,
    createdAt: 1000,
    ttlMs: 60_000,
    result: null,
    endedAt: null,
    cancelled: false,
  });
  expect(await redis.pttl(keys.mcpTask(a, 'cm_1'))).toBeGreaterThan(600_000);
  expect(await store.settle(a, created!, completed(1), 2000)).toBe(true);
  expect(await store.settle(a, created!, completed(2), 3000)).toBe(false);
  expect(await store.read(a, 'cm_1')).toMatchObject({ result: completed(1), endedAt: 2000, cancelled: false });
  const ttl = await redis.pttl(keys.mcpTask(a, 'cm_1'));
  expect(ttl).toBeGreaterThan(50_000);
  expect(ttl).toBeLessThanOrEqual(60_000);
  // Created again (an exec repeated with its Idempotency-Key): kept as it is.
  await store.create(a, { ...task, taskId: 'cm_1', runId: 'cm_1' }, 9000);
  expect(await store.read(a, 'cm_1')).toMatchObject({ createdAt: 1000, result: completed(1) });
  expect(await redis.pttl(keys.mcpTask(a, 'cm_1'))).toBeLessThanOrEqual(60_000);
});

test('two creates of one task at once: the first is recorded whole, the second writes nothing', async () => {
  await Promise.all([
    store.create(a, { ...task, taskId: 'cm_race', runId: 'cm_race' }, 1000),
    store.create(a, { ...task, taskId: 'cm_race', runId: 'cm_race', ttlMs: 5_000, result: completed(7) }, 2000),
  ]);
  expect(await store.read(a, 'cm_race')).toMatchObject({ createdAt: 1000, ttlMs: 60_000, result: null, endedAt: null });
  expect(await redis.pttl(keys.mcpTask(a, 'cm_race'))).toBeGreaterThan(600_000);
  expect(await redis.zscore(keys.mcpTasks(a), 'cm_race')).toBe('1000');
});

test('another tenant or session does not see the task', async () => {
  await store.create(a, { ...task, taskId: 'cm_2', runId: 'cm_2' });
  expect(await store.read(other, 'cm_2')).toBeNull();
  expect(await store.read({ tenant: 'acme', sessionId: 's-2' }, 'cm_2')).toBeNull();
});

test('cancel marks it cancelled with the abort answer; a wait number counts per run', async () => {
  await store.create(a, { ...task, taskId: 'cm_3', runId: 'cm_3' });
  await store.cancel(a, (await store.read(a, 'cm_3'))!, failed('aborted', 'aborted'));
  expect(await store.read(a, 'cm_3')).toMatchObject({ cancelled: true, result: failed('aborted', 'aborted') });
  expect(await store.nextWaitNumber(a, 'cm_3', 60_000)).toBe(1);
  expect(await store.nextWaitNumber(a, 'cm_3', 60_000)).toBe(2);
  expect(await store.nextWaitNumber(a, 'cm_4', 60_000)).toBe(1);
});

test('pages newest first and drops expired tasks from the index', async () => {
  const ref = { tenant: 'acme', sessionId: 'paged' };
  for (let i = 0; i < 7; i += 1) await store.create(ref, { ...task, taskId: `cm_p${i}`, runId: `cm_p${i}` }, 10_000 + i);
  await redis.del(keys.mcpTask(ref, 'cm_p5'));
  const first = await store.page(ref, 0, 3);
  expect(first.tasks.map((t) => t.taskId)).toEqual(['cm_p6', 'cm_p4']);
  const second = await store.page(ref, first.next!, 3);
  expect(second.tasks.map((t) => t.taskId)).toEqual(['cm_p3', 'cm_p2', 'cm_p1']);
  const third = await store.page(ref, second.next!, 3);
  expect(third).toEqual({ tasks: [expect.objectContaining({ taskId: 'cm_p0' })], next: null });
  expect(await redis.zcard(keys.mcpTasks(ref))).toBe(6);
});

test("a deleted session's tasks, their index and wait counters go with it", async () => {
  const ref = { tenant: 'acme', sessionId: 'gone' };
  await new SessionLedger(redis, keys).configure(ref, {});
  await store.create(ref, { ...task, taskId: 'cm_g', runId: 'cm_g' });
  await store.nextWaitNumber(ref, 'cm_g', 60_000);
  expect(await new SessionRemoval(redis, keys).remove(ref)).toBe(true);
  expect(await redis.exists(keys.mcpTask(ref, 'cm_g'), keys.mcpTasks(ref), keys.mcpTaskWaits(ref))).toBe(0);
});
