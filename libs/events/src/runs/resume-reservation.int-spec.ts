import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { StaleEpochError } from '../platform/errors';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildRun } from '../log/projections/rebuild-run';
import { rebuildTranscript } from '../log/projections/rebuild-transcript';
import { RunLedger } from './run-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('resume');
const keys = new KeySpace(prefix);
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `r-${++n}` });

beforeAll(async () => {
  redis = await testRedis('resume');
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A run parked by `owner` at epoch 1; a restart-safe one records its recovery seed as a worker does. */
async function parkedRun(ref: SessionRef, opts: { owner?: string; restartSafe?: boolean } = {}): Promise<string> {
  const runId = newRunId();
  const workerId = opts.owner ?? 'w-1';
  await runs.request(ref, runId, { ...requestData(), restartSafe: opts.restartSafe ?? false });
  const recovery = opts.restartSafe ? { seed: [1, 2, 3, 4], catalogHash: 'h' } : undefined;
  await runs.start(ref, runId, { workerId, epoch: 1, replyTo: '', recovery });
  await runs.append(
    ref,
    untypedAppend({
      type: 'run.parked',
      runId,
      epoch: 1,
      data: { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() },
    }),
  );
  return runId;
}

test('a take sent again with its token (its answer was lost) answers taken and appends no second run.resumed', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  expect(await runs.reserveResume(ref, runId, 'tok-1', 10_000)).toMatchObject({ reserved: true });
  const take = { token: 'tok-1', workerId: 'w-1', epoch: 1, replyTo: '', input: { runId } };
  expect(await runs.resume(ref, runId, take)).toBe(true);
  expect(await runs.resume(ref, runId, take)).toBe(true);
  // Only the worker that took it: the same token from another worker is not its take.
  expect(await runs.resume(ref, runId, { ...take, workerId: 'w-2' })).toBe(false);
  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.resumed']);
  expect(await runs.get(ref, runId)).toEqual(rebuildRun(ref, runId, events));
  // Once the leg ended, the token takes nothing.
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  expect(await runs.resume(ref, runId, take)).toBe(false);
});

test('a wait reserves a parked run; the owner resumes it; the transcript shows the wait', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  const reservation = await runs.reserveResume(ref, runId, 'tok-1', 10_000);
  expect(reservation).toEqual({ reserved: true, owner: 'w-1', epoch: 1, restartSafe: false, expiresAt: expect.stringMatching(/Z$/) });
  expect(await runs.reserveResume(ref, runId, 'tok-2', 10_000)).toEqual({
    reserved: false,
    busy: true,
    status: 'waiting',
    restartSafe: false,
    held: { token: 'tok-1', forMs: expect.any(Number), owner: 'w-1' },
  });
  expect(await runs.resume(ref, runId, { token: 'tok-2', workerId: 'w-1', epoch: 1, replyTo: '', input: { runId } })).toBe(false);
  expect(await runs.resume(ref, runId, { token: 'tok-1', workerId: 'w-1', epoch: 1, replyTo: '', input: { runId } })).toBe(true);
  expect(await runs.giveBackResume(ref, runId, 'tok-1')).toBe(false);
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });

  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.resumed', 'run.completed']);
  const transcript = await runs.transcript(ref);
  expect(transcript?.map((e) => [e.kind, e.call])).toEqual([
    ['input', 'exec'],
    ['result', 'exec'],
    ['input', 'wait'],
    ['result', 'wait'],
  ]);
  expect(transcript).toEqual(rebuildTranscript(events));
  expect(await runs.get(ref, runId)).toEqual(rebuildRun(ref, runId, events));
  expect(await runs.reserveResume(ref, runId, 'tok-3', 10_000)).toEqual({
    reserved: false,
    busy: false,
    status: 'completed',
    restartSafe: false,
    owner: 'w-1',
  });
});

test('a released reservation leaves the run parked and untouched for the next wait', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  const before = await runs.get(ref, runId);
  await runs.reserveResume(ref, runId, 'tok-a', 10_000);
  expect(await runs.giveBackResume(ref, runId, 'tok-a')).toBe(true);
  expect(await runs.get(ref, runId)).toEqual(before);
  expect((await runs.reserveResume(ref, runId, 'tok-b', 10_000)).reserved).toBe(true);
});

test('a lapsed reservation (its API vanished) does not block the next wait', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  await runs.reserveResume(ref, runId, 'tok-old', 1);
  await new Promise((r) => setTimeout(r, 10));
  expect((await runs.reserveResume(ref, runId, 'tok-new', 10_000)).reserved).toBe(true);
});

test('unknown runs are reported as such; locate finds an earlier release’s run across sessions of the tenant only', async () => {
  const ref = newRef();
  expect(await runs.reserveResume(ref, newRunId(), 't', 1000)).toEqual({ reserved: false, busy: false, status: null, restartSafe: false });
  const runId = newRunId();
  // What an earlier release wrote per exec.
  await redis.set(keys.runLocation(ref.tenant, runId), ref.sessionId, 'EX', 60);
  expect(await runs.locate('acme', runId)).toBe(ref.sessionId);
  expect(await runs.locate('other', runId)).toBeNull();
});

// Recovery (SPEC §6): another worker takes a run over; the old owner's writes are fenced.
test('a run taken over by another worker rejects the old owner’s writes as stale', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref, { owner: 'w-old', restartSafe: true });
  expect(await runs.reserveResume(ref, runId, 'tok', 10_000)).toMatchObject({ reserved: true, owner: 'w-old', epoch: 1 });
  const taken = await runs.takeOver(ref, runId, {
    workerId: 'w-new',
    from: { owner: 'w-old', epoch: 1 },
    token: 'tok',
    reason: 'owner lease expired',
  });
  expect(taken).toEqual({ taken: true, epoch: 2 });

  // The old owner comes back and writes with the epoch it held: fenced.
  const stale = runs.append(ref, { type: 'run.lost', runId, epoch: 1, data: { reason: 'late' } });
  await expect(stale).rejects.toBeInstanceOf(StaleEpochError);
  await expect(runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed('old') })).rejects.toBeInstanceOf(
    StaleEpochError,
  );
  await expect(
    runs.resume(ref, runId, { token: 'tok', workerId: 'w-old', epoch: 1, replyTo: '', input: { runId } }),
  ).rejects.toBeInstanceOf(StaleEpochError);

  // The new owner resumes and finishes at epoch 2.
  expect(await runs.resume(ref, runId, { token: 'tok', workerId: 'w-new', epoch: 2, replyTo: '', input: { runId } })).toBe(true);
  await runs.finish(ref, runId, { epoch: 2, type: 'run.completed', result: completed('new') });

  const events = await log.history(ref);
  expect(events.map((e) => [e.type, e.epoch])).toEqual([
    ['run.requested', 0],
    ['run.started', 1],
    ['run.parked', 1],
    ['run.recovered', 2],
    ['run.resumed', 2],
    ['run.completed', 2],
  ]);
  expect(events[1].data.recovery).toEqual({ seed: [1, 2, 3, 4], catalogHash: 'h' });
  expect(events[3].data).toEqual({ workerId: 'w-new', fromWorker: 'w-old', epoch: 2, reason: 'owner lease expired' });
  const view = await runs.get(ref, runId);
  expect(view).toMatchObject({ status: 'completed', owner: 'w-new', epoch: 2, lastResult: completed('new') });
  expect(rebuildRun(ref, runId, events)).toEqual(view);
});

test('a takeover is a compare-and-set: a second taker, a wrong owner or another wait’s token loses', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref, { owner: 'w-old', restartSafe: true });
  await runs.reserveResume(ref, runId, 'tok', 10_000);
  expect(await runs.takeOver(ref, runId, { workerId: 'w-x', from: { owner: 'w-other', epoch: 1 }, token: 'tok', reason: 'r' })).toEqual({
    taken: false,
    status: 'waiting',
  });
  expect(await runs.takeOver(ref, runId, { workerId: 'w-x', from: { owner: 'w-old', epoch: 1 }, token: 'not-mine', reason: 'r' })).toEqual({
    taken: false,
    status: 'waiting',
  });
  expect(await runs.takeOver(ref, runId, { workerId: 'w-a', from: { owner: 'w-old', epoch: 1 }, token: 'tok', reason: 'r' })).toEqual({
    taken: true,
    epoch: 2,
  });
  expect(await runs.takeOver(ref, runId, { workerId: 'w-b', from: { owner: 'w-old', epoch: 1 }, token: 'tok', reason: 'r' })).toEqual({
    taken: false,
    status: 'waiting',
  });
  expect(await runs.get(ref, runId)).toMatchObject({ owner: 'w-a', epoch: 2 });
});

test('a released parked run has no owner; only its owner at its epoch can release it', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref, { owner: 'w-old', restartSafe: true });
  expect(await runs.release(ref, runId, { workerId: 'w-other', epoch: 1, reason: 'shutdown' })).toBe(false);
  expect(await runs.release(ref, runId, { workerId: 'w-old', epoch: 1, reason: 'shutdown' })).toBe(true);
  expect(await runs.get(ref, runId)).toMatchObject({ status: 'waiting', owner: null, epoch: 1 });
  await runs.reserveResume(ref, runId, 'tok', 10_000);
  expect(await runs.takeOver(ref, runId, { workerId: 'w-new', from: { owner: null, epoch: 1 }, token: 'tok', reason: 'released' })).toEqual(
    { taken: true, epoch: 2 },
  );
  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.released', 'run.recovered']);
  expect(rebuildRun(ref, runId, events)).toEqual(await runs.get(ref, runId));
});

test('SPEC §16: a leg whose answer is owed goes to exactly one later wait, once it parked or ended', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, { ...requestData(), restartSafe: true });
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '', recovery: { seed: [1, 2, 3, 4], catalogHash: 'h' } });
  expect(await runs.oweAnswer(ref, runId)).toBe(true);
  // While the leg runs, a wait is told its answer is owed (not "already being resumed").
  expect(await runs.reserveResume(ref, runId, 'tok-1', 10_000)).toMatchObject({
    reserved: false,
    status: 'running',
    answerOwed: true,
    owner: 'w-1',
  });
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(7) });
  // Ended: a run that is not running owes nothing new.
  expect(await runs.oweAnswer(ref, runId)).toBe(false);
  expect(await runs.reserveResume(ref, runId, 'tok-2', 10_000)).toEqual({
    reserved: false,
    busy: false,
    status: 'completed',
    restartSafe: true,
    answerOwed: true,
  });
  // Taken once: the next wait is refused as on any ended run.
  expect(await runs.reserveResume(ref, runId, 'tok-3', 10_000)).toMatchObject({ reserved: false, status: 'completed' });
  expect(await runs.reserveResume(ref, runId, 'tok-3', 10_000)).not.toHaveProperty('answerOwed');
});

test('SPEC §16: an owed leg that parked answers its parked answer to the next wait, then the wait after resumes it', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref, { restartSafe: true });
  expect(await runs.reserveResume(ref, runId, 'tok-1', 10_000)).toMatchObject({ reserved: true });
  expect(await runs.resume(ref, runId, { token: 'tok-1', workerId: 'w-1', epoch: 1, replyTo: '', input: { runId } })).toBe(true);
  expect(await runs.oweAnswer(ref, runId)).toBe(true);
  await runs.append(
    ref,
    untypedAppend({
      type: 'run.parked',
      runId,
      epoch: 1,
      data: { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() },
    }),
  );
  expect(await runs.reserveResume(ref, runId, 'tok-2', 10_000)).toMatchObject({ reserved: false, status: 'waiting', answerOwed: true });
  expect(await runs.reserveResume(ref, runId, 'tok-3', 10_000)).toMatchObject({ reserved: true });
});
