import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { platformSettledData } from '@codemode/contracts';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildTranscript } from '../log/projections/rebuild-transcript';
import { RunLedger } from './run-ledger';
import { deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('idle-wait');
const keys = new KeySpace(prefix);
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `iw-${++n}` });

beforeAll(async () => {
  redis = await testRedis('idle-wait');
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
  const data = { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() };
  await runs.append(ref, untypedAppend({ type: 'run.parked', runId, epoch: 1, data }));
  return runId;
}

/** SPEC §18: the wait's answer is recorded only against the run exactly as its caller read it. */
describe('answerIdleWait', () => {
  test('records run.waited with the transcript entries of the wait, and moves lastEvent', async () => {
    const ref = newRef();
    const runId = await parkedRun(ref);
    const { run, lastEvent } = await runs.readIdleWait(ref, runId);
    expect(run?.status).toBe('waiting');
    const result = waiting(runId);
    expect(await runs.answerIdleWait(ref, { runId, lastEvent }, { input: { runId }, result })).toBe(true);
    const events = await log.history(ref);
    expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.waited']);
    expect(events[3].data).toEqual({ input: { runId }, result });
    expect((await runs.readIdleWait(ref, runId)).lastEvent).toBe(events[3].id);
    const transcript = await runs.transcript(ref);
    expect(transcript?.slice(-2)).toEqual([
      { kind: 'input', call: 'wait', runId, at: expect.any(String), input: { runId } },
      { kind: 'result', call: 'wait', runId, at: expect.any(String), result },
    ]);
    expect(transcript).toEqual(rebuildTranscript(events));
    // Answered from what it read: a second answer against the old lastEvent is refused.
    expect(await runs.answerIdleWait(ref, { runId, lastEvent }, { input: { runId }, result })).toBe(false);
  });

  test('a platform answer appended after the read sends the wait the ordinary way', async () => {
    const ref = newRef();
    const runId = await parkedRun(ref);
    const { lastEvent } = await runs.readIdleWait(ref, runId);
    const answer = platformSettledData({ id: 'bridge:callValue:1', ok: true, value: 1 }, false);
    await runs.append(ref, untypedAppend({ type: 'tool.settled', runId, epoch: 1, data: answer }));
    expect(await runs.answerIdleWait(ref, { runId, lastEvent }, { input: { runId }, result: waiting(runId) })).toBe(false);
    expect((await log.history(ref)).map((e) => e.type)).not.toContain('run.waited');
  });

  test('a run another wait holds, or that is not parked, is not answered', async () => {
    const ref = newRef();
    const runId = await parkedRun(ref);
    const { lastEvent } = await runs.readIdleWait(ref, runId);
    expect(await runs.reserveResume(ref, runId, 'tok-1', 10_000)).toMatchObject({ reserved: true });
    expect(await runs.answerIdleWait(ref, { runId, lastEvent }, { input: { runId }, result: waiting(runId) })).toBe(false);
    expect(await runs.giveBackResume(ref, runId, 'tok-1')).toBe(true);
    expect(await runs.answerIdleWait(ref, { runId, lastEvent }, { input: { runId }, result: waiting(runId) })).toBe(true);
    expect(await runs.answerIdleWait(ref, { runId: newRunId(), lastEvent: '' }, { input: {}, result: waiting(runId) })).toBe(false);
  });
});
