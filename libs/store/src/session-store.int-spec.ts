import type { SessionRef } from '@codemode/contracts';
import { EventLog, KeySpace, RunAlreadyEndedError, RunLedger, SessionLedger, rebuildStore } from '@codemode/events';
import type { Redis } from 'ioredis';
import { StoreCapacityError, StoreKeyError, StoreValueTooLargeError } from './errors';
import { MAX_STORE_VALUE_BYTES } from './limits';
import { SessionStore } from './session-store';
import { StoreBuffer } from './store-buffer';
import { deleteKeys, LIMITS, newRunId, testPrefix, testRedis } from './test-support';

const prefix = testPrefix('session');
const keys = new KeySpace(prefix);
let redis: Redis;
let store: SessionStore;
let runs: RunLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const FULL_MESSAGE = 'Code Mode store exceeds 1 MiB of serialized JSON; delete keys or store less data.';
const quarter = (c: string) => c.repeat(MAX_STORE_VALUE_BYTES - 2);

beforeAll(async () => {
  redis = await testRedis('session-store');
  store = new SessionStore(redis, keys);
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function runningRun(ref: SessionRef): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, { title: 't', code: 'return 1', restartSafe: false, awaitResults: false, limits: LIMITS });
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
  return runId;
}

async function commits(ref: SessionRef): Promise<number> {
  return (await log.history(ref)).filter((e) => e.type === 'store.committed').length;
}

test('a cell buffers, commits once, and the next cell sees the committed values', async () => {
  const ref = newRef();
  const first = new StoreBuffer(await store.snapshot(ref));
  first.set('count', 1);
  first.set('nothing', null);
  first.set('list', [1, { a: 'b' }]);
  first.set('list', undefined);
  const runId = await runningRun(ref);
  const { eventId } = await store.commit(ref, { runId, epoch: 1, writes: first.writes() });
  expect(eventId).toEqual(expect.any(String));
  expect(await commits(ref)).toBe(1);

  const second = new StoreBuffer(await store.snapshot(ref));
  expect(second.get('count')).toEqual({ found: true, value: 1 });
  expect(second.get('nothing')).toEqual({ found: true, value: null });
  expect(second.get('list')).toEqual({ found: false });
  expect(await store.values(ref)).toEqual({ values: { count: 1, nothing: null } });
  expect(await store.snapshot(ref)).toEqual(rebuildStore(await log.history(ref)));
});

test('a run commits once: a retried or repeated commit (its reply was lost, or a rebuilt run) writes nothing', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  const buffer = new StoreBuffer(await store.snapshot(ref));
  buffer.set('n', 1);
  const first = await store.commit(ref, { runId, epoch: 1, writes: buffer.writes() });
  buffer.set('n', 2);
  expect(await store.commit(ref, { runId, epoch: 1, writes: buffer.writes() })).toEqual(first);
  expect(await commits(ref)).toBe(1);
  expect(await store.values(ref)).toEqual({ values: { n: 1 } });
});

test('no writes: nothing is appended', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  expect(await store.commit(ref, { runId, epoch: 1, writes: new StoreBuffer(new Map()).writes() })).toEqual({ eventId: null });
  expect(await commits(ref)).toBe(0);
});

test('two concurrent cells that each fit alone: one commit wins, the other gets StoreCapacityError and changes nothing', async () => {
  const ref = newRef();
  const seed = new StoreBuffer(await store.snapshot(ref));
  seed.set('a', quarter('a'));
  seed.set('b', quarter('b'));
  await store.commit(ref, { runId: await runningRun(ref), epoch: 1, writes: seed.writes() });

  // Both start from the same snapshot (2 × 256 KiB) and each adds 2 × 256 KiB: fine alone.
  const snapshot = await store.snapshot(ref);
  const [x, y] = [new StoreBuffer(snapshot), new StoreBuffer(snapshot)];
  x.set('x1', quarter('x'));
  x.set('x2', quarter('x'));
  y.set('y1', quarter('y'));
  y.set('y2', quarter('y'));
  const [rx, ry] = [await runningRun(ref), await runningRun(ref)];
  const settled = await Promise.allSettled([
    store.commit(ref, { runId: rx, epoch: 1, writes: x.writes() }),
    store.commit(ref, { runId: ry, epoch: 1, writes: y.writes() }),
  ]);
  const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  expect(failed).toHaveLength(1);
  expect(failed[0].reason).toBeInstanceOf(StoreCapacityError);
  expect(failed[0].reason).toMatchObject({ name: 'RangeError', message: FULL_MESSAGE });
  expect(await commits(ref)).toBe(2);
  const keysNow = [...(await store.snapshot(ref)).keys()].sort();
  expect([
    ['a', 'b', 'x1', 'x2'],
    ['a', 'b', 'y1', 'y2'],
  ]).toContainEqual(keysNow);
  expect(await store.snapshot(ref)).toEqual(rebuildStore(await log.history(ref)));
});

test('a run that already ended cannot commit (the worker commits before the terminal event)', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  const telemetry = {
    catalogSize: 0,
    sources: { openclaw: 0, mcp: 0, client: 0 },
    searchCount: 0,
    describeCount: 0,
    callCount: 0,
    counterScope: 'run',
    visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
  };
  await runs.finish(ref, runId, {
    epoch: 1,
    type: 'run.completed',
    result: { status: 'completed', value: 1, replaySafe: false, telemetry },
  });
  await expect(store.commit(ref, { runId, epoch: 1, writes: new Map([['k', '1']]) })).rejects.toBeInstanceOf(RunAlreadyEndedError);
  expect(await commits(ref)).toBe(0);
  expect(await store.values(ref)).toEqual({ values: {} });
});

test('commit re-validates what a StoreBuffer would have refused', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  await expect(store.commit(ref, { runId, epoch: 1, writes: new Map([['', '1']]) })).rejects.toBeInstanceOf(StoreKeyError);
  const tooBig = JSON.stringify('x'.repeat(MAX_STORE_VALUE_BYTES));
  await expect(store.commit(ref, { runId, epoch: 1, writes: new Map([['k', tooBig]]) })).rejects.toBeInstanceOf(StoreValueTooLargeError);
  expect(await commits(ref)).toBe(0);
});

test('values: null for a session never created, {} for a session without a store', async () => {
  const ref = newRef();
  expect(await store.values(ref)).toBeNull();
  await new SessionLedger(redis, keys).configure(ref, {});
  expect(await store.values(ref)).toEqual({ values: {} });
});
