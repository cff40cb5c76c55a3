import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { EventLog } from './event-log';
import { KeySpace } from '../platform/keys';
import { rebuildTranscript } from './projections/rebuild-transcript';
import { RunLedger } from '../runs/run-ledger';
import { ScriptLoader } from '../platform/script-loader';
import { pastField } from '../runs/run-record';
import { completed, deleteKeys, failed, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('retention');
const keys = new KeySpace(prefix);
/** One second of retention, so a test can outwait it. */
const RETENTION_MS = 1000;
const scripts = ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000 });
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };
/** Enough ~100-byte events to fill several stream nodes (4 KiB each by default). */
const MANY = 200;

beforeAll(async () => {
  redis = await testRedis('retention');
  runs = new RunLedger(redis, keys, scripts);
  log = new EventLog(redis, keys, scripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const outwaitRetention = () => new Promise((resolve) => setTimeout(resolve, RETENTION_MS + 100));

/** A started run that wrote `outputs` run.output events. */
async function liveRun(ref: SessionRef, outputs: number, ledger = runs): Promise<string> {
  const runId = newRunId();
  await ledger.request(ref, runId, requestData('t', `return ${outputs}`));
  await ledger.start(ref, runId, W);
  for (let i = 0; i < outputs; i++) {
    await ledger.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: `line ${i} `.padEnd(60, '.') } });
  }
  return runId;
}

async function finishedRun(ref: SessionRef, outputs: number, ledger = runs): Promise<string> {
  const runId = await liveRun(ref, outputs, ledger);
  await ledger.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(outputs) });
  return runId;
}

async function eventsOf(ref: SessionRef, runId: string): Promise<string[]> {
  return (await log.history(ref)).filter((e) => e.runId === runId).map((e) => e.type);
}

test('a finished run expires after the retention; old entries are trimmed, a fresh run keeps all of its own', async () => {
  const ref = newRef();
  const old = await finishedRun(ref, MANY);
  // Kept compact, its hash is folded into its record at its end (lua/includes/run-record.lua).
  expect(await redis.exists(keys.run(ref, old))).toBe(0);
  expect(await redis.hexists(keys.pastRuns(ref), pastField(old))).toBe(1);
  expect((await runs.get(ref, old))?.status).toBe('completed');
  expect(await eventsOf(ref, old)).toHaveLength(MANY + 3);

  await outwaitRetention();
  const fresh = await finishedRun(ref, 3);

  expect(await redis.exists(keys.run(ref, old))).toBe(0);
  expect(await runs.get(ref, old)).toBeNull();
  expect(await redis.zscore(keys.runs(ref), old)).toBeNull();
  expect(await eventsOf(ref, old)).toEqual([]);
  expect(await eventsOf(ref, fresh)).toEqual(['run.requested', 'run.started', 'run.output', 'run.output', 'run.output', 'run.completed']);
  expect((await runs.get(ref, fresh))?.status).toBe('completed');
  expect(await redis.zscore(keys.runs(ref), fresh)).not.toBeNull();

  // The transcript loses what the log lost, and nothing else.
  const transcript = await runs.transcript(ref);
  expect(transcript).toEqual(rebuildTranscript(await log.history(ref)));
  expect(transcript?.some((e) => e.runId === old && e.kind === 'input')).toBe(false);
  expect(transcript?.filter((e) => e.runId === fresh).map((e) => e.kind)).toEqual(['input', 'result']);
});

test('a live run holds trimming back, however old, until it ends', async () => {
  const ref = newRef();
  const parked = await liveRun(ref, MANY);
  await runs.append(ref, untypedAppend({ type: 'run.parked', runId: parked, epoch: 1, data: { result: waiting(parked) } }));
  const ended = await finishedRun(ref, MANY);
  await outwaitRetention();

  await finishedRun(ref, 1);
  const parkedEvents = await eventsOf(ref, parked);
  expect(parkedEvents).toHaveLength(MANY + 3);
  expect(parkedEvents[0]).toBe('run.requested');
  // The run that ended after it is kept too (the log is cut at one point), though its hash expired.
  expect(await eventsOf(ref, ended)).toHaveLength(MANY + 3);
  expect(await redis.exists(keys.run(ref, ended))).toBe(0);
  expect(await redis.zscore(keys.runs(ref), parked)).not.toBeNull();

  // Once it ends, its old events go like any other, at the next trim: one per TRIM_EVERY_MS
  // (here RETENTION_MS), terminal events included, so the trim made just above must age first.
  await outwaitRetention();
  await runs.finish(ref, parked, { epoch: 1, type: 'run.failed', result: failed('gave up') });
  expect(await eventsOf(ref, parked)).toEqual(['run.failed']);
  expect(await eventsOf(ref, ended)).toEqual([]);
  expect(await runs.transcript(ref)).toEqual(rebuildTranscript(await log.history(ref)));
  expect(await redis.zscore(keys.runs(ref), parked)).toBeNull();
  expect((await runs.get(ref, parked))?.status).toBe('failed');
});

test("a run's end trims no more often than any other event: at most once per TRIM_EVERY_MS", async () => {
  const ref = newRef();
  await finishedRun(ref, 1);
  const trimmedAt = await redis.hget(keys.session(ref), 'trimmedAt');
  expect(trimmedAt).not.toBeNull();
  // Within the retention (here TRIM_EVERY_MS), more ends leave the session's last trim as it was.
  await finishedRun(ref, 1);
  await finishedRun(ref, 0);
  expect(await redis.hget(keys.session(ref), 'trimmedAt')).toBe(trimmedAt);
  await outwaitRetention();
  await finishedRun(ref, 0);
  expect(Number(await redis.hget(keys.session(ref), 'trimmedAt'))).toBeGreaterThan(Number(trimmedAt));
});

test('a run idle longer than any park may last holds nothing back', async () => {
  const ref = newRef();
  const deadScripts = ScriptLoader.withSettings({ retentionSeconds: 1, liveRunMaxIdleSeconds: 1 });
  const ledger = new RunLedger(redis, keys, deadScripts);
  const dead = await liveRun(ref, MANY, ledger);
  await outwaitRetention();

  await finishedRun(ref, 1, ledger);
  expect(await eventsOf(ref, dead)).toEqual([]);
  expect((await ledger.get(ref, dead))?.status).toBe('running');

  // Ended late, past the trim: no record (retention could never reach it); its hash keeps its TTL.
  await ledger.finish(ref, dead, { epoch: 1, type: 'run.failed', result: failed('lost') });
  expect(await redis.hexists(keys.pastRuns(ref), pastField(dead) as string)).toBe(0);
  expect(await redis.pttl(keys.run(ref, dead))).toBeGreaterThan(0);
  expect((await ledger.get(ref, dead))?.status).toBe('failed');
});

test('session-level events are trimmed too, and the transcript with them', async () => {
  const ref = newRef();
  const reject = (i: number) => runs.reject(ref, 'exec', { code: `bad ${i}` }, failed(`no ${i}`, 'invalid_input'));
  for (let i = 0; i < MANY; i++) await reject(i);
  expect(await redis.llen(keys.transcript(ref))).toBe(2 * MANY);
  await outwaitRetention();

  await reject(MANY);
  expect(await redis.xlen(keys.events(ref))).toBe(1);
  const transcript = await runs.transcript(ref);
  expect(transcript).toEqual(rebuildTranscript(await log.history(ref)));
  expect(transcript?.map((e) => e.kind)).toEqual(['input', 'result']);
  expect(transcript?.[1]).toMatchObject({ kind: 'result', result: { error: `no ${MANY}` } });
});

test('between two trims, events older than the retention wait for the next one', async () => {
  const ref = newRef();
  const ledger = new RunLedger(redis, keys, ScriptLoader.withSettings({ retentionSeconds: 2 }));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const reject = (text: string) => ledger.reject(ref, 'exec', { code: text }, failed(text, 'invalid_input'));
  const texts = async () => (await log.history(ref)).map((e) => (e.data.input as { code: string }).code);

  await reject('a'); // t0: trims (the first event of the session)
  await sleep(1000);
  await reject('b'); // t0+1.0: no trim
  await sleep(1100);
  await reject('c'); // t0+2.1: trims, a is older than 2 s
  expect(await texts()).toEqual(['b', 'c']);
  await sleep(1100);
  await reject('d'); // t0+3.2: b is older than 2 s, but the last trim was 1.1 s ago
  expect(await texts()).toEqual(['b', 'c', 'd']);
  expect(await ledger.transcript(ref)).toHaveLength(6);
});

test('with the default retention nothing recent is trimmed and a finished run is kept as its record', async () => {
  const ref = newRef();
  const ledger = new RunLedger(redis, keys);
  const runId = await finishedRun(ref, 5, ledger);
  await finishedRun(ref, 1, ledger);
  expect(await eventsOf(ref, runId)).toHaveLength(8);
  expect(await redis.exists(keys.run(ref, runId))).toBe(0);
  expect((await ledger.get(ref, runId))?.status).toBe('completed');
  // Its events are in its record, not in the stream: the record goes with the session's keys.
  expect(await redis.xlen(keys.events(ref))).toBe(0);
  expect(await redis.pttl(keys.pastRuns(ref))).toBeGreaterThan(0);
});
