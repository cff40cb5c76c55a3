import type { Redis } from 'ioredis';
import type { CodeModeResult, SessionRef } from '@codemode/contracts';
import { KeySpace } from '../platform/keys';
import { RunLedger } from './run-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

/** SPEC §2: a wait Idempotency-Key's record, written with the reservation and linked to its leg by resume-run. */
const prefix = testPrefix('wait-idem');
const keys = new KeySpace(prefix);
let redis: Redis;
let runs: RunLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `wi-${++n}` });

beforeAll(async () => {
  redis = await testRedis('wait-idem');
  runs = new RunLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function parkedRun(ref: SessionRef): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
  await park(ref, runId, waiting(runId));
  return runId;
}

async function park(ref: SessionRef, runId: string, result: CodeModeResult): Promise<void> {
  const expiresAt = new Date(Date.now() + 60_000).toISOString();
  await runs.append(ref, untypedAppend({ type: 'run.parked', runId, epoch: 1, data: { result, expiresAt } }));
}

const resume = (ref: SessionRef, runId: string, token: string): Promise<boolean> =>
  runs.resume(ref, runId, { token, workerId: 'w-1', epoch: 1, replyTo: '', input: { runId } });

test('a used key answers its record instead of reserving; the first leg is linked to it', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  const first = await runs.reserveKeyedResume(ref, runId, 'tok-1', 10_000, { key: 'k1', replaces: '' });
  expect(first).toMatchObject({ reserved: true, owner: 'w-1' });
  // Held by the first wait: the repeat learns its token and for how long it has held the run.
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-2', 10_000, { key: 'k1', replaces: '' })).toEqual({
    reserved: false,
    keyUsed: { runId, token: 'tok-1', answerEvent: null, heldForMs: expect.any(Number) },
  });
  expect(await runs.keyedWait(ref, runId)).toMatchObject({ legToken: null, resumeToken: 'tok-1' });
  expect(await resume(ref, runId, 'tok-1')).toBe(true);
  expect(await runs.keyedWait(ref, runId)).toMatchObject({ legToken: 'tok-1', resumeToken: null, view: { status: 'running' } });
  // Once taken, no reservation holds the run: heldForMs is gone.
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-3', 10_000, { key: 'k1', replaces: '' })).toEqual({
    reserved: false,
    keyUsed: { runId, token: 'tok-1', answerEvent: null, heldForMs: null },
  });
});

test("a later leg gives the key its leg's answer as an event; the log holds that answer", async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  await runs.reserveKeyedResume(ref, runId, 'tok-1', 10_000, { key: 'k1', replaces: '' });
  await resume(ref, runId, 'tok-1');
  const firstAnswer: CodeModeResult = { ...waiting(runId), output: [{ type: 'text', text: 'first leg' }] };
  await park(ref, runId, firstAnswer);
  // A wait without a key resumes it again: the first leg's answer moves into the key's record.
  expect(await runs.reserveResume(ref, runId, 'tok-2', 10_000)).toMatchObject({ reserved: true });
  expect(await resume(ref, runId, 'tok-2')).toBe(true);
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(7) });
  const used = await runs.reserveKeyedResume(ref, runId, 'tok-3', 10_000, { key: 'k1', replaces: '' });
  expect(used).toEqual({
    reserved: false,
    keyUsed: { runId, token: 'tok-1', answerEvent: expect.stringMatching(/^\d+-\d+$/), heldForMs: null },
  });
  const eventId = 'keyUsed' in used ? used.keyUsed.answerEvent : null;
  expect(await runs.resultAt(ref, eventId ?? '')).toEqual(firstAnswer);
  expect(await runs.keyedWait(ref, runId)).toMatchObject({ legToken: 'tok-2', view: { status: 'completed' } });
});

test('a stale record is replaced only by the caller that names its token; keys are per session', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  await runs.reserveKeyedResume(ref, runId, 'tok-1', 10_000, { key: 'k1', replaces: '' });
  expect(await runs.giveBackResume(ref, runId, 'tok-1')).toBe(true);
  // Another token does not replace it; the record's own does, and reserves the run.
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-2', 10_000, { key: 'k1', replaces: 'tok-x' })).toMatchObject({
    keyUsed: { token: 'tok-1' },
  });
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-2', 10_000, { key: 'k1', replaces: 'tok-1' })).toMatchObject({ reserved: true });
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-3', 10_000, { key: 'k1', replaces: '' })).toMatchObject({
    keyUsed: { token: 'tok-2', heldForMs: expect.any(Number) },
  });
  // The same key in another session, or in the same session id of another tenant, is another key.
  const other = newRef();
  const otherRun = await parkedRun(other);
  expect(await runs.reserveKeyedResume(other, otherRun, 'tok-9', 10_000, { key: 'k1', replaces: '' })).toMatchObject({ reserved: true });
  const otherTenant: SessionRef = { tenant: 'rival', sessionId: ref.sessionId };
  const rivalRun = await parkedRun(otherTenant);
  expect(await runs.reserveKeyedResume(otherTenant, rivalRun, 'tok-r', 10_000, { key: 'k1', replaces: '' })).toMatchObject({
    reserved: true,
  });
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-4', 10_000, { key: 'k1', replaces: '' })).toMatchObject({
    keyUsed: { runId, token: 'tok-2' },
  });
  expect(await redis.pttl(keys.waitIdempotency(ref, 'k1'))).toBeGreaterThan(0);
});

test('a key whose run is gone (its session deleted) is not answered; a refused wait writes no record', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  await runs.reserveKeyedResume(ref, runId, 'tok-1', 10_000, { key: 'k1', replaces: '' });
  await redis.del(keys.run(ref, runId));
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-2', 10_000, { key: 'k1', replaces: '' })).toEqual({
    reserved: false,
    busy: false,
    status: null,
    restartSafe: false,
  });
  const ended = await parkedRun(ref);
  await runs.append(ref, { type: 'run.lost', runId: ended, epoch: 1, data: { reason: 'test' } });
  expect(await runs.reserveKeyedResume(ref, ended, 'tok-3', 10_000, { key: 'k2', replaces: '' })).toMatchObject({
    reserved: false,
    status: 'lost',
  });
  expect(await redis.exists(keys.waitIdempotency(ref, 'k2'))).toBe(0);
});

test("SPEC §17: a keyed wait that takes an owed answer records it under its key; the leg's own key keeps its answer", async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  // A keyed wait resumes the run; its leg does not answer in time, so its answer is owed (SPEC §16).
  await runs.reserveKeyedResume(ref, runId, 'tok-1', 10_000, { key: 'k1', replaces: '' });
  await resume(ref, runId, 'tok-1');
  expect(await runs.oweAnswer(ref, runId)).toBe(true);
  // While the leg runs, a keyed wait is told so and writes no record (it comes back when the leg is done).
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-2', 10_000, { key: 'k2', replaces: '' })).toMatchObject({
    status: 'running',
    answerOwed: true,
  });
  expect(await redis.exists(keys.waitIdempotency(ref, 'k2'))).toBe(0);
  const legAnswer: CodeModeResult = { ...waiting(runId), output: [{ type: 'text', text: 'the owed leg' }] };
  await park(ref, runId, legAnswer);

  expect(await runs.reserveKeyedResume(ref, runId, 'tok-2', 10_000, { key: 'k2', replaces: '' })).toMatchObject({
    reserved: false,
    status: 'waiting',
    answerOwed: true,
  });
  // The same key again: the record names this wait, whose leg is now the run's (keyedWaitStep answers from the run).
  expect(await runs.reserveKeyedResume(ref, runId, 'tok-3', 10_000, { key: 'k2', replaces: '' })).toEqual({
    reserved: false,
    keyUsed: { runId, token: 'tok-2', answerEvent: null, heldForMs: null },
  });
  expect(await runs.keyedWait(ref, runId)).toMatchObject({ legToken: 'tok-2', resumeToken: null, view: { lastResult: legAnswer } });
  // The key that resumed the leg is given that leg's answer as an event: it answers the same.
  const first = await runs.reserveKeyedResume(ref, runId, 'tok-4', 10_000, { key: 'k1', replaces: '' });
  expect(first).toMatchObject({ keyUsed: { token: 'tok-1', answerEvent: expect.stringMatching(/^\d+-\d+$/) } });
  expect(await runs.resultAt(ref, 'keyUsed' in first ? (first.keyUsed.answerEvent ?? '') : '')).toEqual(legAnswer);

  // A later wait resumes the run: the owed answer's key now finds it as an event, as any leg's key does.
  expect(await runs.reserveResume(ref, runId, 'tok-5', 10_000)).toMatchObject({ reserved: true });
  expect(await resume(ref, runId, 'tok-5')).toBe(true);
  const taken = await runs.reserveKeyedResume(ref, runId, 'tok-6', 10_000, { key: 'k2', replaces: '' });
  expect(taken).toMatchObject({ keyUsed: { token: 'tok-2', answerEvent: expect.stringMatching(/^\d+-\d+$/) } });
  expect(await runs.resultAt(ref, 'keyUsed' in taken ? (taken.keyUsed.answerEvent ?? '') : '')).toEqual(legAnswer);
});
