import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import {
  InvalidArgumentError,
  RUN_HISTORY_LIMIT_MESSAGE,
  RunAlreadyEndedError,
  RunHistoryLimitError,
  TrailNotLandedError,
} from '../platform/errors';
import { EventLog } from '../log/event-log';
import { createEventStores } from '../event-stores';
import { KeySpace } from '../platform/keys';
import { rebuildTranscript } from '../log/projections/rebuild-transcript';
import { RunLedger } from './run-ledger';
import { ScriptLoader } from '../platform/script-loader';
import { StoreLedger } from '../ledgers/store-ledger';
import { completed, deleteKeys, failed, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('history-cap');
const keys = new KeySpace(prefix);
const MAX_EVENTS = 10;
const MAX_BYTES = 4000;
const scripts = ScriptLoader.withSettings({ runHistoryMaxEvents: MAX_EVENTS, runHistoryMaxBytes: MAX_BYTES });
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let store: StoreLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };

beforeAll(async () => {
  redis = await testRedis('history-cap');
  runs = new RunLedger(redis, keys, scripts);
  log = new EventLog(redis, keys, scripts);
  store = new StoreLedger(redis, keys, scripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function runningRun(ref: SessionRef, ledger = runs): Promise<string> {
  const runId = newRunId();
  await ledger.request(ref, runId, requestData());
  await ledger.start(ref, runId, W);
  return runId;
}

const output = (runId: string, text = 'x') => ({ type: 'run.output' as const, runId, epoch: 1, data: { text } });

async function counters(ref: SessionRef, runId: string): Promise<{ events: number; bytes: number }> {
  const [events, bytes] = await redis.hmget(keys.run(ref, runId), 'historyEvents', 'historyBytes');
  return { events: Number(events), bytes: Number(bytes) };
}

async function rejection(write: Promise<unknown>): Promise<unknown> {
  return write.then(
    () => 'accepted',
    (error: unknown) => error,
  );
}

test('the write past the event cap is refused with the SPEC message; nothing is written; run.failed still lands', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  for (let i = 2; i < MAX_EVENTS; i++) await runs.append(ref, output(runId, `line ${i}`));
  expect((await counters(ref, runId)).events).toBe(MAX_EVENTS);
  const length = await redis.xlen(keys.events(ref));

  const error = await rejection(log.append(ref, output(runId, 'one too many')));
  expect(error).toBeInstanceOf(RunHistoryLimitError);
  expect(error).toMatchObject({
    code: 'internal_error',
    message: 'code mode run history limit reached; start a new run.',
    runId,
    events: MAX_EVENTS,
  });
  expect(RUN_HISTORY_LIMIT_MESSAGE).toBe('code mode run history limit reached; start a new run.');
  expect(await redis.xlen(keys.events(ref))).toBe(length);
  expect((await counters(ref, runId)).events).toBe(MAX_EVENTS);
  expect((await runs.get(ref, runId))?.status).toBe('running');

  // A store commit is a run write like any other.
  const commit = store.commit(ref, { runId, epoch: 1, writes: new Map([['k', '1']]), capacityBytes: 1 << 20 });
  expect(await rejection(commit)).toBeInstanceOf(RunHistoryLimitError);
  expect(await store.read(ref)).toEqual(new Map());

  // The terminal event always passes, past the cap: the worker can fail the run.
  const result = { ...failed(RUN_HISTORY_LIMIT_MESSAGE), code: 'internal_error' as const };
  await runs.finish(ref, runId, { epoch: 1, type: 'run.failed', result });
  const run = await runs.get(ref, runId);
  expect(run?.status).toBe('failed');
  expect(run?.lastResult).toMatchObject({ status: 'failed', code: 'internal_error', error: RUN_HISTORY_LIMIT_MESSAGE });
  // The counts go with the terminal event: an ended run takes no more events.
  expect(await redis.hexists(keys.run(ref, runId), 'historyEvents')).toBe(0);
  expect(await log.history(ref)).toHaveLength(length + 1);
  expect(await rejection(runs.append(ref, output(runId)))).toBeInstanceOf(RunAlreadyEndedError);
});

test('trailed events refused at the cap leave no trail mark: the end sent behind them writes nothing; the cap failure then lands', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  for (let i = 3; i < MAX_EVENTS; i++) await runs.append(ref, output(runId, `line ${i}`));
  const length = await redis.xlen(keys.events(ref));
  const trailed = [1, 2].map((n) => untypedAppend({ type: 'tool.called', runId, epoch: 1, data: { callId: `c${n}` } }));
  const trail = log.appendAll(ref, trailed, 'mark');
  const end = rejection(runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1), trailMark: 'mark' }));
  const outcomes = await trail;
  expect(outcomes[0]).toMatchObject({ eventId: expect.any(String) });
  expect(outcomes[1]).toBeInstanceOf(RunHistoryLimitError);
  expect(await end).toBeInstanceOf(TrailNotLandedError);
  expect(await log.history(ref)).toHaveLength(length + 1);
  expect((await runs.get(ref, runId))?.status).toBe('running');

  const result = { ...failed(RUN_HISTORY_LIMIT_MESSAGE), code: 'internal_error' as const };
  await runs.finish(ref, runId, { epoch: 1, type: 'run.failed', result });
  expect((await runs.get(ref, runId))?.lastResult).toMatchObject({ status: 'failed', error: RUN_HISTORY_LIMIT_MESSAGE });
});

test('the byte cap counts event data; a write that would pass it is refused, a smaller one is not', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  const { bytes: before } = await counters(ref, runId);
  await runs.append(ref, output(runId, 'a'.repeat(1500)));
  const { bytes } = await counters(ref, runId);
  expect(bytes - before).toBe(JSON.stringify({ text: 'a'.repeat(1500) }).length);

  const room = MAX_BYTES - bytes;
  const tooBig = 'b'.repeat(room - JSON.stringify({ text: '' }).length + 1);
  const error = await rejection(runs.append(ref, output(runId, tooBig)));
  expect(error).toBeInstanceOf(RunHistoryLimitError);
  expect(error).toMatchObject({ runId, events: 3, bytes, message: RUN_HISTORY_LIMIT_MESSAGE });

  // Exactly filling the cap is allowed; then even a one-byte event is refused.
  await runs.append(ref, output(runId, tooBig.slice(1)));
  expect((await counters(ref, runId)).bytes).toBe(MAX_BYTES);
  expect(await rejection(runs.append(ref, untypedAppend({ type: 'tool.called', runId, epoch: 1, data: {} })))).toBeInstanceOf(
    RunHistoryLimitError,
  );

  // run.lost and run.expired end runs through the generic path: never refused.
  await runs.append(ref, { type: 'run.lost', runId, epoch: 1, data: { reason: 'worker gone' } });
  expect((await runs.get(ref, runId))?.status).toBe('lost');
});

test('lifecycle transitions are not held to the cap (they write before appending); the next run write is', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  for (let i = 2; i < MAX_EVENTS - 1; i++) await runs.append(ref, output(runId));
  await runs.append(ref, untypedAppend({ type: 'run.parked', runId, epoch: 1, data: { result: waiting(runId) } }));
  expect((await counters(ref, runId)).events).toBe(MAX_EVENTS);

  expect(await runs.reserveResume(ref, runId, 'tok', 10_000)).toMatchObject({ reserved: true });
  expect(await runs.resume(ref, runId, { token: 'tok', workerId: 'w-1', epoch: 1, replyTo: '', input: { runId } })).toBe(true);
  const run = await runs.get(ref, runId);
  expect(run).toMatchObject({ status: 'running', epoch: 1 });
  const events = await log.history(ref);
  expect(events.at(-1)?.type).toBe('run.resumed');
  expect(await runs.transcript(ref)).toEqual(rebuildTranscript(events));
  expect(await rejection(runs.append(ref, output(runId)))).toBeInstanceOf(RunHistoryLimitError);
});

test('the cap is per run: another run of the same session writes on', async () => {
  const ref = newRef();
  const full = await runningRun(ref);
  for (let i = 2; i < MAX_EVENTS; i++) await runs.append(ref, output(full));
  expect(await rejection(runs.append(ref, output(full)))).toBeInstanceOf(RunHistoryLimitError);

  const other = await runningRun(ref);
  await runs.append(ref, output(other));
  expect((await counters(ref, other)).events).toBe(3);
  // Session-level events are not held to any run's cap.
  await runs.reject(ref, 'exec', { code: '' }, failed('bad input', 'invalid_input'));
});

test('settings are compiled into the scripts: SPEC defaults, per-loader values, and the shared default', async () => {
  const source = ScriptLoader.default().source('append-event');
  expect(source).toContain('local RETENTION_MS = 86400000');
  expect(source).toContain('local RUN_HISTORY_MAX_EVENTS = 10000');
  expect(source).toContain('local RUN_HISTORY_MAX_BYTES = 16777216');
  expect(source).not.toMatch(/^--- @define/m);
  expect(scripts.source('finish-run')).toContain(`local RUN_HISTORY_MAX_EVENTS = ${MAX_EVENTS}`);
  expect(() => ScriptLoader.withSettings({ runHistoryMaxEvents: 0 })).toThrow(InvalidArgumentError);
  expect(() => ScriptLoader.withSettings({ retentionSeconds: 1.5 })).toThrow(InvalidArgumentError);

  // Boot wiring: the stores of createEventStores run the scripts built with its settings; a ledger
  // built on the shared default loader keeps the defaults.
  const ref = newRef();
  const stores = createEventStores({ redis, keys, settings: { runHistoryMaxEvents: 3 } });
  const runId = await runningRun(ref, stores.runs);
  await stores.runs.append(ref, output(runId));
  expect(await rejection(stores.runs.append(ref, output(runId)))).toBeInstanceOf(RunHistoryLimitError);
  await new RunLedger(redis, keys).append(ref, output(runId));
  expect((await counters(ref, runId)).events).toBe(4);
});
