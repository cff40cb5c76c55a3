import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { EventLog } from './event-log';
import { KeySpace } from './keys';
import { rebuildRun } from './projections/rebuild-run';
import { rebuildTranscript } from './projections/rebuild-transcript';
import { RunLedger } from './run-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, waiting } from './test-support';

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

async function parkedRun(ref: SessionRef): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
  await runs.append(ref, { type: 'run.parked', runId, epoch: 1, data: { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() } });
  return runId;
}

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
  expect(await runs.releaseResume(ref, runId, 'tok-1')).toBe(false);
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
  expect(await runs.reserveResume(ref, runId, 'tok-3', 10_000)).toEqual({ reserved: false, busy: false, status: 'completed', restartSafe: false, owner: 'w-1' });
});

test('a released reservation leaves the run parked and untouched for the next wait', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref);
  const before = await runs.get(ref, runId);
  await runs.reserveResume(ref, runId, 'tok-a', 10_000);
  expect(await runs.releaseResume(ref, runId, 'tok-a')).toBe(true);
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

test('unknown runs are reported as such; locate finds a run across sessions of the tenant only', async () => {
  const ref = newRef();
  expect(await runs.reserveResume(ref, newRunId(), 't', 1000)).toEqual({ reserved: false, busy: false, status: null, restartSafe: false });
  const runId = newRunId();
  await runs.locateLater(ref, runId, 60);
  expect(await runs.locate('acme', runId)).toBe(ref.sessionId);
  expect(await runs.locate('other', runId)).toBeNull();
});
