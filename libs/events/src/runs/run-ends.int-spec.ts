import type { Redis } from 'ioredis';
import { RUN_END_REASONS, type SessionRef } from '@codemode/contracts';
import { TenantQuotaLedger } from '@codemode/fleet';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { ParkedImageStore } from './parked-image-store';
import { LiveRunIndex } from './parked-run-index';
import { ParkedRunHoldings, RunEnds } from './run-ends';
import { RunLedger } from './run-ledger';
import { RunReplies } from './run-replies';
import { createRedis } from '../platform/redis';
import { TrailNotLandedError } from '../platform/errors';
import type { AppendInput } from '../log/event-log';
import {
  completed,
  deleteKeys,
  failed,
  newRunId,
  requestData,
  TEST_REDIS_URL,
  testPrefix,
  testRedis,
  untypedAppend,
  waiting,
} from '../test-support';

/** RunEnds: every terminal event, fenced, and what an ended run held given back. */
const prefix = testPrefix('run-ends');
const keys = new KeySpace(prefix);
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let live: LiveRunIndex;
let images: ParkedImageStore;
let quotas: TenantQuotaLedger;
let ends: RunEnds;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `e-${++n}` });
const image = { image: Buffer.from([1, 2, 3]), wasmHash: 'h', preludeVersion: 'v', epoch: 1, host: '{}' };

beforeAll(async () => {
  redis = await testRedis('run-ends');
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
  live = new LiveRunIndex(redis, keys);
  images = new ParkedImageStore(redis, keys);
  quotas = new TenantQuotaLedger(redis, keys);
  ends = new RunEnds(runs, live, new ParkedRunHoldings(quotas, images, () => undefined));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A run started at epoch 1 by `w1`, live-indexed; parked (with an image and a quota place) when `parked`. */
async function startedRun(ref: SessionRef, parked = false): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await live.add(ref, runId, Date.now() + 60_000);
  await runs.start(ref, runId, { workerId: 'w1', epoch: 1, replyTo: '' });
  if (parked) {
    const expiresAt = Date.now() + 60_000;
    const data = { result: waiting(runId), expiresAt: new Date(expiresAt).toISOString(), snapshotBytes: 3 };
    await runs.park(ref, { runId, epoch: 1, data, image });
    await quotas.admitParked(ref.tenant, runId, { expiresAt, bytes: 100, now: Date.now() }, { runs: 10, bytes: 10_000 });
  }
  return runId;
}

const types = async (ref: SessionRef): Promise<string[]> => (await log.history(ref)).map((e) => e.type);
const liveIndexed = async (ref: SessionRef, runId: string): Promise<boolean> =>
  (await live.due(Number.MAX_SAFE_INTEGER, 1000)).some((due) => due.runId === runId && due.ref.sessionId === ref.sessionId);
const calledEvent = (runId: string, callId: string): AppendInput =>
  untypedAppend({ type: 'tool.called', runId, epoch: 1, data: { callId, tool: 'openclaw.read' } });
const settledEvent = (runId: string, callId: string): AppendInput =>
  untypedAppend({ type: 'tool.settled', runId, epoch: 1, data: { callId, ok: true } });
/** Holdings are given back best effort (not awaited): the commands are on the wire; one round trip later they have run. */
const settled = () => redis.ping();

describe('RunEnds', () => {
  it('finishes a run once with its result and takes it out of the live-run index', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    await ends.finish({ ref, runId, epoch: 1 }, completed(2));
    await settled();
    expect(await types(ref)).toEqual(['run.requested', 'run.started', 'run.completed']);
    expect((await runs.get(ref, runId))?.lastResult).toMatchObject({ status: 'completed', value: 2 });
    expect(await liveIndexed(ref, runId)).toBe(false);
    await expect(ends.finish({ ref, runId, epoch: 1 }, failed('again'))).rejects.toThrow();
    expect(await types(ref)).toEqual(['run.requested', 'run.started', 'run.completed']);
  });

  it('with commands beside the end: they and the live-index removal leave in its write; an end that fails puts the entry back, due', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    const beside = jest.fn();
    await ends.finish({ ref, runId, epoch: 1 }, completed(3), { beside });
    await settled();
    expect(beside).toHaveBeenCalledTimes(1);
    expect(await types(ref)).toEqual(['run.requested', 'run.started', 'run.completed']);
    expect(await liveIndexed(ref, runId)).toBe(false);
    // Ended already (a retry whose first end landed): the entry is back, due now, for the sweep to forget.
    await expect(ends.finish({ ref, runId, epoch: 1 }, failed('again'), { beside })).rejects.toThrow();
    await settled();
    expect(beside).toHaveBeenCalledTimes(2);
    const due = await live.due(Date.now(), 1000);
    expect(due.some((entry) => entry.runId === runId)).toBe(true);
    await live.remove(ref, runId);
  });

  it('an end sent right behind trailed events in one write is written after them, and keeps no mark', async () => {
    const ref = newRef();
    // Both scripts loaded first: a call that finds its library missing is sent again once it is loaded, maybe after the end.
    const loaded = await startedRun(ref);
    await log.appendAll(ref, [calledEvent(loaded, 'c0')]);
    await ends.finish({ ref, runId: loaded, epoch: 1 }, completed(0));
    const runId = await startedRun(ref);
    const trail = log.appendAll(ref, [calledEvent(runId, 'c1'), settledEvent(runId, 'c1')], 'mark-1');
    const ending = ends.finish({ ref, runId, epoch: 1 }, completed(4), { trailMark: 'mark-1' });
    expect((await trail).every((outcome) => !(outcome instanceof Error))).toBe(true);
    await ending;
    expect((await log.history(ref)).filter((e) => e.runId === runId).map((e) => e.type)).toEqual([
      'run.requested',
      'run.started',
      'tool.called',
      'tool.settled',
      'run.completed',
    ]);
    expect(await redis.hexists(keys.run(ref, runId), 'trailMark')).toBe(0);
  });

  it('an end whose trail mark is not on the run writes nothing, and its live-index entry is back, due', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    await log.appendAll(ref, [calledEvent(runId, 'c1')], 'mark-1');
    const beside = jest.fn();
    const refused = ends.finish({ ref, runId, epoch: 1 }, completed(4), { trailMark: 'mark-2', beside });
    await expect(refused).rejects.toBeInstanceOf(TrailNotLandedError);
    await settled();
    expect(await types(ref)).toEqual(['run.requested', 'run.started', 'tool.called']);
    expect((await runs.get(ref, runId))?.status).toBe('running');
    expect(await liveIndexed(ref, runId)).toBe(true);
    // Written as the events decide, unfenced.
    await ends.finish({ ref, runId, epoch: 1 }, completed(4), { beside });
    expect(await types(ref)).toEqual(['run.requested', 'run.started', 'tool.called', 'run.completed']);
  });

  it('a parked run that ends gives back its quota place and its image', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, true);
    expect(await images.has(ref, runId)).toBe(true);
    await ends.finish({ ref, runId, epoch: 1, holdsParkedQuota: true, imaged: true }, failed('aborted', 'aborted'));
    await settled();
    expect(await images.has(ref, runId)).toBe(false);
    // Its place is free: the tenant's one-run quota admits another parked run.
    const admitted = await quotas.admitParked(
      ref.tenant,
      'other',
      { expiresAt: Date.now() + 60_000, bytes: 1, now: Date.now() },
      { runs: 1, bytes: 10_000 },
    );
    expect(admitted.admitted).toBe(true);
    await quotas.freeParked(ref.tenant, 'other');
  });

  it('expires a parked run fenced by the epoch it saw, with the expiry reason', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, true);
    expect(await ends.expire({ ref, runId, epoch: 0 })).toBe(false);
    expect(await ends.expire({ ref, runId, epoch: 1 })).toBe(true);
    expect(await ends.lose({ ref, runId, epoch: 1 }, { reason: 'late' })).toBe(false);
    const events = await log.history(ref);
    expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.expired']);
    expect(events[3].data).toEqual({ reason: RUN_END_REASONS.expired });
    expect((await runs.get(ref, runId))?.status).toBe('expired');
  });

  it('a lost run that moved to a newer epoch keeps its image: it is the new owner’s', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, true);
    expect(await ends.lose({ ref, runId, epoch: 0, imaged: true })).toBe(false);
    await settled();
    expect(await images.has(ref, runId)).toBe(true);
  });

  it('loses a run with the owner-lost reason by default, or a caller-given one', async () => {
    const ref = newRef();
    const first = await startedRun(ref);
    const second = await startedRun(ref, true);
    expect(await ends.lose({ ref, runId: first, epoch: 1 })).toBe(true);
    expect(await ends.lose({ ref, runId: second, epoch: 1 }, { reason: 'the worker holding the parked cell shut down' })).toBe(true);
    const lost = (await log.history(ref)).filter((e) => e.type === 'run.lost');
    expect(lost.map((e) => [e.runId, e.data])).toEqual([
      [first, { reason: RUN_END_REASONS.ownerLost }],
      [second, { reason: 'the worker holding the parked cell shut down' }],
    ]);
  });

  it('answers the caller of a lost run, recording that answer as the run’s result only when asked', async () => {
    const ref = newRef();
    const answered = await startedRun(ref);
    const recorded = await startedRun(ref);
    const replies = new RunReplies(createRedis(TEST_REDIS_URL, { name: 'run-ends-sub', subscriber: true }), keys, 'run-ends-test');
    await replies.start();
    const signal = new AbortController().signal;
    try {
      const first = replies.waitFor(answered, { signal });
      const second = replies.waitFor(recorded, { signal });
      const unavailable = failed('code mode run is unavailable', 'invalid_input');
      await ends.lose(
        { ref, runId: answered, epoch: 1 },
        { answer: { replyTo: replies.channelFor(ref), result: unavailable, recorded: false } },
      );
      const lostAfterCalls = failed('lost with its worker after it called tools');
      await ends.lose(
        { ref, runId: recorded, epoch: 1 },
        { answer: { replyTo: replies.channelFor(ref), result: lostAfterCalls, recorded: true } },
      );
      expect(await first).toEqual(unavailable);
      expect(await second).toEqual(lostAfterCalls);
      const lost = (await log.history(ref)).filter((e) => e.type === 'run.lost');
      expect(lost.map((e) => e.data)).toEqual([
        { reason: RUN_END_REASONS.ownerLost },
        { reason: RUN_END_REASONS.ownerLost, result: lostAfterCalls },
      ]);
    } finally {
      await replies.close();
    }
  });

  it('abandons only a run still requested, and takes it out of the live-run index', async () => {
    const ref = newRef();
    const runId = newRunId();
    await runs.request(ref, runId, requestData());
    await live.add(ref, runId, Date.now() + 60_000);
    const result = failed('code mode did not start the cell within its budget; the cell was not run.');
    expect(await ends.abandon(ref, runId, result)).toEqual({ abandoned: true });
    await settled();
    expect(await liveIndexed(ref, runId)).toBe(false);
    expect(await ends.abandon(ref, runId, result)).toEqual({ abandoned: false, status: 'failed' });
    const started = await startedRun(ref);
    expect(await ends.abandon(ref, started, result)).toEqual({ abandoned: false, status: 'running' });
    expect(await liveIndexed(ref, started)).toBe(true);
  });
});
