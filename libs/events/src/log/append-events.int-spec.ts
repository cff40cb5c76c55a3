import type { Redis } from 'ioredis';
import { toolSettledData, type SessionRef } from '@codemode/contracts';
import { InvalidEventError, RunAlreadyEndedError, RunHistoryLimitError, StaleEpochError } from '../platform/errors';
import { EventLog, type AppendInput } from './event-log';
import { KeySpace } from '../platform/keys';
import { RunLedger } from '../runs/run-ledger';
import { ScriptLoader } from '../platform/script-loader';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend } from '../test-support';

const prefix = testPrefix('append-events');
const keys = new KeySpace(prefix);
const MAX_EVENTS = 12;
const scripts = ScriptLoader.withSettings({ runHistoryMaxEvents: MAX_EVENTS });
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };

beforeAll(async () => {
  redis = await testRedis('append-events');
  runs = new RunLedger(redis, keys, scripts);
  log = new EventLog(redis, keys, scripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function runningRun(ref: SessionRef): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, W);
  return runId;
}

/** Three tool calls of a restart-safe run starting, then settling, each with its input and outcome kept. */
function toolEvents(runId: string): AppendInput[] {
  const called = [1, 2, 3].map((i): AppendInput => ({
    type: 'tool.called',
    runId,
    epoch: 1,
    data: { callId: `c${i}`, tool: 'ls', source: 'openclaw', inputBytes: 12, input: { path: `dir-${i}` } },
  }));
  const settled = [1, 2, 3].map((i): AppendInput => ({
    type: 'tool.settled',
    runId,
    epoch: 1,
    data: toolSettledData({ callId: `c${i}`, tool: 'ls', durationMs: i }, { ok: true, value: { entries: [`f${i}`] } }, true),
  }));
  return [...called, ...settled];
}

/**
 * What a session holds after its writes, with the parts that differ between sessions left out
 * (times and ids valued, the run's id named `RUN`).
 */
async function written(ref: SessionRef, runId: string): Promise<Record<string, unknown>> {
  const events = (await log.readLogged(ref, { limit: 100 })).events.map(({ type, data }) => ({ type, data }));
  const transcript = (await runs.transcript(ref))?.map((entry) => entry.call);
  const [historyEvents, historyBytes, status] = await redis.hmget(keys.run(ref, runId), 'historyEvents', 'historyBytes', 'status');
  const storedBytes = await redis.hget(keys.session(ref), 'storedBytes');
  // Every field of the run hash, the times and ids its events gave it named, not valued (the list
  // of its entries' ids too: how long it grows depends on when they landed, run-entries.lua).
  const runHash = Object.entries(await redis.hgetall(keys.run(ref, runId)))
    .map(([field, value]) => `${field}=${field === 'entries' || /^\d{13}|^\d{4}-\d\d-\d\dT/.test(value) ? 'set' : value}`)
    .sort();
  const storedLog = Object.values(await redis.hgetall(keys.storedLog(ref))).reduce((sum, bytes) => sum + Number(bytes), 0);
  const expiring = await Promise.all([keys.run(ref, runId), keys.session(ref), keys.storedLog(ref)].map((key) => redis.pttl(key)));
  const whole = {
    events,
    transcript,
    historyEvents,
    historyBytes,
    status,
    storedBytes,
    runHash,
    storedLog,
    expires: expiring.map((ms) => ms > 0),
  };
  return JSON.parse(JSON.stringify(whole).replaceAll(runId, 'RUN')) as Record<string, unknown>;
}

test('appendAll writes what the same appends one by one write: events in order, transcript, counters', async () => {
  const [one, batch] = [newRef(), newRef()];
  const [oneRun, batchRun] = [await runningRun(one), await runningRun(batch)];
  const ids: string[] = [];
  for (const input of toolEvents(oneRun)) ids.push((await log.append(one, input)).eventId);

  const outcomes = await log.appendAll(batch, toolEvents(batchRun));

  expect(outcomes).toHaveLength(6);
  const batchIds = outcomes.map((outcome) => (outcome instanceof Error ? outcome.message : outcome.eventId));
  expect(batchIds.every((id) => /^\d+-\d+$/.test(id))).toBe(true);
  expect([...batchIds].sort((a, b) => (BigInt(a.replace('-', '')) < BigInt(b.replace('-', '')) ? -1 : 1))).toEqual(batchIds);
  const stream = (await redis.xrange(keys.events(batch), '-', '+')).map(([id]) => id);
  expect(stream.slice(-6)).toEqual(batchIds);
  const seen = await written(batch, batchRun);
  expect(seen).toEqual(await written(one, oneRun));
  expect(seen.historyEvents).toBe('8');
  expect((seen.events as { type: string }[]).map((e) => e.type)).toEqual([
    'run.requested',
    'run.started',
    'tool.called',
    'tool.called',
    'tool.called',
    'tool.settled',
    'tool.settled',
    'tool.settled',
  ]);
});

test('each event is answered in its place: a stale epoch or a dedicated type refuses that event only', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  const [first, , third] = toolEvents(runId);
  const stale: AppendInput = { ...toolEvents(runId)[1], epoch: 0 };
  const dedicated = untypedAppend({ type: 'run.started', runId, epoch: 1, data: {} });

  const outcomes = await log.appendAll(ref, [first, stale, dedicated, third]);

  expect(outcomes[0]).toEqual({ eventId: expect.stringMatching(/^\d+-\d+$/) });
  expect(outcomes[1]).toBeInstanceOf(StaleEpochError);
  expect(outcomes[1]).toMatchObject({ runId, epoch: 0, storedEpoch: 1 });
  expect(outcomes[2]).toBeInstanceOf(InvalidEventError);
  expect(outcomes[3]).toEqual({ eventId: expect.stringMatching(/^\d+-\d+$/) });
  const types = (await log.readLogged(ref, { limit: 100 })).events.map((e) =>
    e.type === 'tool.called' ? `${e.type} ${String(e.data.callId)}` : e.type,
  );
  expect(types).toEqual(['run.requested', 'run.started', 'tool.called c1', 'tool.called c3']);
});

test('events of an ended run are each refused with the run\u2019s status; nothing is written', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  const length = await redis.xlen(keys.events(ref));

  const outcomes = await log.appendAll(ref, toolEvents(runId).slice(0, 2));

  expect(outcomes.map((o) => o instanceof RunAlreadyEndedError && o.status)).toEqual(['completed', 'completed']);
  expect(await redis.xlen(keys.events(ref))).toBe(length);
});

test('at the history cap the event that does not fit and every one after it are refused; those before it are written', async () => {
  const ref = newRef();
  const runId = await runningRun(ref);
  const output = (i: number): AppendInput => ({ type: 'run.output', runId, epoch: 1, data: { text: `line ${i}` } });
  for (let i = 2; i < MAX_EVENTS - 2; i++) await log.append(ref, output(i));

  const outcomes = await log.appendAll(
    ref,
    [1, 2, 3, 4].map((i) => output(100 + i)),
  );

  expect(outcomes.slice(0, 2)).toEqual([{ eventId: expect.any(String) }, { eventId: expect.any(String) }]);
  expect(outcomes[2]).toBeInstanceOf(RunHistoryLimitError);
  expect(outcomes[3]).toBeInstanceOf(RunHistoryLimitError);
  expect(outcomes[2]).toMatchObject({ runId, events: MAX_EVENTS, message: 'code mode run history limit reached; start a new run.' });
  expect(await redis.hget(keys.run(ref, runId), 'historyEvents')).toBe(String(MAX_EVENTS));
  const texts = (await log.readLogged(ref, { limit: 100 })).events.filter((e) => e.type === 'run.output').map((e) => e.data.text);
  expect(texts.slice(-2)).toEqual(['line 101', 'line 102']);
  expect((await runs.get(ref, runId))?.status).toBe('running');
});

test("a batch that mixes tool calls' events with another event writes what the appends one by one write", async () => {
  const [one, batch] = [newRef(), newRef()];
  const [oneRun, batchRun] = [await runningRun(one), await runningRun(batch)];
  const mixed = (runId: string): AppendInput[] => {
    const [c1, c2, , s1] = toolEvents(runId);
    return [c1, { type: 'run.output', runId, epoch: 1, data: { text: 'between' } }, s1, c2];
  };
  for (const input of mixed(oneRun)) await log.append(one, input);

  const outcomes = await log.appendAll(batch, mixed(batchRun));

  expect(outcomes.every((outcome) => !(outcome instanceof Error))).toBe(true);
  const seen = await written(batch, batchRun);
  expect(seen).toEqual(await written(one, oneRun));
  expect(seen.historyEvents).toBe('6');
});

test("tool calls' events at the history cap: those that fit are written and counted as one by one, the rest refused", async () => {
  const [one, batch] = [newRef(), newRef()];
  const [oneRun, batchRun] = [await runningRun(one), await runningRun(batch)];
  // Two events of the run so far, twelve asked for: ten fit under the cap of MAX_EVENTS.
  const twice = (runId: string): AppendInput[] => [...toolEvents(runId), ...toolEvents(runId)];
  for (const input of twice(oneRun)) await log.append(one, input).catch(() => undefined);

  const outcomes = await log.appendAll(batch, twice(batchRun));

  expect(outcomes.slice(0, MAX_EVENTS - 2).every((outcome) => !(outcome instanceof Error))).toBe(true);
  expect(outcomes.slice(MAX_EVENTS - 2).every((outcome) => outcome instanceof RunHistoryLimitError)).toBe(true);
  const seen = await written(batch, batchRun);
  expect(seen).toEqual(await written(one, oneRun));
  expect(seen.historyEvents).toBe(String(MAX_EVENTS));
});

test('appendAll refuses events of two runs, or none of a run, before writing anything', async () => {
  const ref = newRef();
  const [a, b] = [await runningRun(ref), await runningRun(ref)];
  const length = await redis.xlen(keys.events(ref));

  await expect(log.appendAll(ref, [toolEvents(a)[0], toolEvents(b)[1]])).rejects.toBeInstanceOf(InvalidEventError);
  await expect(log.appendAll(ref, [untypedAppend({ type: 'exec.rejected', data: {} })])).rejects.toBeInstanceOf(InvalidEventError);
  expect(await redis.xlen(keys.events(ref))).toBe(length);
});
