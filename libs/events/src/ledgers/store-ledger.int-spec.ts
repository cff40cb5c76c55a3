import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { InvalidEventError, RunAlreadyEndedError, StaleEpochError } from '../platform/errors';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildRun } from '../log/projections/rebuild-run';
import { rebuildSession } from '../log/projections/rebuild-session';
import { rebuildStore, storeBytes } from '../log/projections/rebuild-store';
import { RunLedger } from '../runs/run-ledger';
import { SessionLedger } from './session-ledger';
import { StoreLedger } from './store-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend } from '../test-support';

const prefix = testPrefix('store');
const keys = new KeySpace(prefix);
let redis: Redis;
let store: StoreLedger;
let runs: RunLedger;
let log: EventLog;
let sessions: SessionLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const CAPACITY = 1024 * 1024;

beforeAll(async () => {
  redis = await testRedis('store-ledger');
  store = new StoreLedger(redis, keys);
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
  sessions = new SessionLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function runningRun(ref: SessionRef): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
  return runId;
}

async function expectStoreMatchesLog(ref: SessionRef, runIds: string[]): Promise<void> {
  const events = await log.history(ref);
  const rebuilt = rebuildStore(events);
  expect(await store.read(ref)).toEqual(rebuilt);
  expect(await store.totalBytes(ref)).toBe(storeBytes(rebuilt));
  expect(await sessions.get(ref)).toEqual(rebuildSession(events));
  for (const runId of runIds) expect(await runs.get(ref, runId)).toEqual(rebuildRun(ref, runId, events));
}

test('one store.committed per commit; the hash keeps JSON text verbatim; projection equals rebuild', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  const tricky = '{"s":"a\\ud800b","n":9007199254740994,"e":[],"o":{}}';
  const writes = new Map<string, string | null>([
    ['plain', '1'],
    ['\ud800lone', tricky],
    ['__proto__', 'null'],
    ['gone', null],
  ]);
  const outcome = await store.commit(ref, { runId, epoch: 1, writes, capacityBytes: CAPACITY });
  expect(outcome).toEqual({ committed: true, eventId: expect.any(String), totalBytes: 1 + tricky.length + 4 });

  const { events } = await log.read(ref, { limit: 100 });
  const commits = events.filter((e) => e.type === 'store.committed');
  expect(commits).toHaveLength(1);
  expect(commits[0]).toMatchObject({ id: outcome.committed && outcome.eventId, runId });
  expect(commits[0].data).toEqual({
    runId,
    set: JSON.parse('{"plain":1,"\\ud800lone":' + tricky + ',"__proto__":null}'),
    deleted: ['gone'],
  });
  expect(await store.read(ref)).toEqual(
    new Map([
      ['plain', '1'],
      ['\ud800lone', tricky],
      ['__proto__', 'null'],
    ]),
  );

  const second = await runningRun(ref);
  await store.commit(ref, {
    runId: second,
    epoch: 1,
    writes: new Map([
      ['plain', null],
      ['more', '"x"'],
    ]),
    capacityBytes: CAPACITY,
  });
  expect([...(await store.read(ref)).keys()].sort()).toEqual(['\ud800lone', '__proto__', 'more'].sort());
  await expectStoreMatchesLog(ref, [runId, second]);
});

test('capacity is re-checked at commit, in commit order: of two concurrent commits one is declined', async () => {
  const ref = newRef();
  const [a, b] = [await runningRun(ref), await runningRun(ref)];
  const big = (c: string) => JSON.stringify(c.repeat(600 * 1024));
  const [ra, rb] = await Promise.all([
    store.commit(ref, { runId: a, epoch: 1, writes: new Map([['a', big('a')]]), capacityBytes: CAPACITY }),
    store.commit(ref, { runId: b, epoch: 1, writes: new Map([['b', big('b')]]), capacityBytes: CAPACITY }),
  ]);
  expect([ra.committed, rb.committed].sort()).toEqual([false, true]);
  const declined = ra.committed ? rb : ra;
  expect(declined).toEqual({ committed: false, totalBytes: 600 * 1024 + 2, wouldBe: 2 * (600 * 1024 + 2) });
  const events = await log.history(ref);
  expect(events.filter((e) => e.type === 'store.committed')).toHaveLength(1);
  expect((await store.read(ref)).size).toBe(1);
  // A commit that only shrinks the store always goes through.
  const c = await runningRun(ref);
  expect(
    (
      await store.commit(ref, {
        runId: c,
        epoch: 1,
        writes: new Map([
          ['a', null],
          ['b', null],
        ]),
        capacityBytes: 0,
      })
    ).committed,
  ).toBe(true);
  expect(await store.totalBytes(ref)).toBe(0);
  await expectStoreMatchesLog(ref, [a, b, c]);
});

test('fenced like every run write: an ended run or a stale epoch commits nothing', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  await expect(store.commit(ref, { runId, epoch: 1, writes: new Map([['k', '1']]), capacityBytes: CAPACITY })).rejects.toBeInstanceOf(
    RunAlreadyEndedError,
  );
  const other = await runningRun(ref);
  await expect(
    store.commit(ref, { runId: other, epoch: 0, writes: new Map([['k', '1']]), capacityBytes: CAPACITY }),
  ).rejects.toBeInstanceOf(StaleEpochError);
  expect(await store.read(ref)).toEqual(new Map());
  expect((await log.history(ref)).some((e) => e.type === 'store.committed')).toBe(false);
});

test('the generic append refuses store.committed and tools.registered', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  await expect(
    log.append(ref, untypedAppend({ type: 'store.committed', runId, epoch: 1, data: { set: {}, deleted: [] } })),
  ).rejects.toBeInstanceOf(InvalidEventError);
  await expect(log.append(ref, untypedAppend({ type: 'tools.registered', data: { tools: [] } }))).rejects.toBeInstanceOf(InvalidEventError);
});

test('readIfSession: null for a session never created, the values otherwise', async () => {
  const ref = newRef();
  expect(await store.readIfSession(ref)).toBeNull();
  await sessions.configure(ref, {});
  expect(await store.readIfSession(ref)).toEqual(new Map());
});
