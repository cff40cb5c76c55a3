import type { Redis } from 'ioredis';
import { RUN_END_REASONS, type SessionRef } from '@codemode/contracts';
import { EventLog } from './event-log';
import { KeySpace } from './keys';
import { ParkedImageStore } from './parked-image-store';
import { RunLedger } from './run-ledger';
import { pastExpiry, RunOwnership } from './run-ownership';
import { deleteKeys, newRunId, requestData, testPrefix, testRedis, waiting } from './test-support';
import { WorkerPresence } from './worker-presence';

const prefix = testPrefix('ownership');
const keys = new KeySpace(prefix);
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let presence: WorkerPresence;
let ownership: RunOwnership;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `o-${++n}` });

beforeAll(async () => {
  redis = await testRedis('ownership');
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
  presence = new WorkerPresence(redis, keys);
  ownership = new RunOwnership(runs, presence);
  await presence.beat('w-alive', 60_000);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A run started by `owner` at epoch 1, parked when `parked`. */
async function startedRun(ref: SessionRef, owner: string, opts: { restartSafe?: boolean; parked?: boolean } = {}): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, { ...requestData(), restartSafe: opts.restartSafe ?? false });
  await runs.start(ref, runId, { workerId: owner, epoch: 1, replyTo: '' });
  if (opts.parked) {
    await runs.append(ref, {
      type: 'run.parked',
      runId,
      epoch: 1,
      data: { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() },
    });
  }
  return runId;
}

async function eventTypes(ref: SessionRef): Promise<string[]> {
  return (await log.history(ref)).map((e) => e.type);
}

describe('RunOwnership', () => {
  it('counts an owner gone when there is none or its lease lapsed, alive while it beats', async () => {
    expect(await ownership.ownerGone({ runId: 'r', owner: 'w-alive' })).toBe(false);
    expect(await ownership.ownerGone({ runId: 'r', owner: 'w-dead' })).toBe(true);
    expect(await ownership.ownerGone({ runId: 'r', owner: '' })).toBe(true);
    expect(await ownership.ownerGone({ runId: 'r', owner: null })).toBe(true);
  });

  it('judges runs this worker owns by what it holds, not by its lease', async () => {
    const held = new Set(['r-held']);
    const local = new RunOwnership(runs, presence, { workerId: 'w-alive', holds: (runId) => held.has(runId) });
    expect(await local.ownerGone({ runId: 'r-held', owner: 'w-alive' })).toBe(false);
    expect(await local.ownerGone({ runId: 'r-dropped', owner: 'w-alive' })).toBe(true);
    expect(await local.ownerGone({ runId: 'r-dropped', owner: 'w-dead' })).toBe(true);
  });

  it('classifies a run as held by its live owner, replayed or lost', async () => {
    expect(await ownership.classify({ runId: 'r', owner: 'w-alive', restartSafe: false })).toBe('held');
    expect(await ownership.classify({ runId: 'r', owner: 'w-dead', restartSafe: true })).toBe('replay');
    expect(await ownership.classify({ runId: 'r', owner: '', restartSafe: true })).toBe('replay');
    expect(await ownership.classify({ runId: 'r', owner: 'w-dead', restartSafe: false })).toBe('lose');
  });

  it('classifies a run whose owner is gone and whose image is in Redis as restored (SPEC §12)', async () => {
    const images = new ParkedImageStore(redis, keys);
    const withImages = new RunOwnership(runs, presence, undefined, images);
    const ref = newRef();
    await images.put(ref, 'r-imaged', { image: Buffer.from([1]), wasmHash: 'h', preludeVersion: 'v', epoch: 1, host: '{}' }, 60_000);
    expect(await withImages.classify({ runId: 'r-imaged', owner: 'w-dead', restartSafe: false }, ref)).toBe('restore');
    expect(await withImages.classify({ runId: 'r-imaged', owner: '', restartSafe: true }, ref)).toBe('restore');
    expect(await withImages.classify({ runId: 'r-imaged', owner: 'w-alive', restartSafe: false }, ref)).toBe('held');
    expect(await withImages.classify({ runId: 'r-other', owner: 'w-dead', restartSafe: false }, ref)).toBe('lose');
    expect(await withImages.classify({ runId: 'r-imaged', owner: 'w-dead', restartSafe: false })).toBe('lose');
  });

  it('calls a running run orphaned only when it has an owner and that owner is gone', async () => {
    expect(await ownership.runningOrphan({ runId: 'r', status: 'running', owner: 'w-dead' })).toBe(true);
    expect(await ownership.runningOrphan({ runId: 'r', status: 'running', owner: 'w-alive' })).toBe(false);
    expect(await ownership.runningOrphan({ runId: 'r', status: 'running', owner: null })).toBe(false);
    expect(await ownership.runningOrphan({ runId: 'r', status: 'waiting', owner: 'w-dead' })).toBe(false);
  });

  it('loses an orphaned running run that is not replay-safe, once, with the owner-lost reason', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, 'w-dead');
    expect(await ownership.loseIfOrphaned(ref, await runs.get(ref, runId))).toBe(true);
    expect(await ownership.loseIfOrphaned(ref, await runs.get(ref, runId))).toBe(false);
    const events = await log.history(ref);
    expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.lost']);
    expect(events[2].data).toEqual({ reason: RUN_END_REASONS.ownerLost });
  });

  it('leaves a replay-safe orphan to recovery and a run with a live owner alone', async () => {
    const ref = newRef();
    const safe = await startedRun(ref, 'w-dead', { restartSafe: true });
    const live = await startedRun(ref, 'w-alive');
    expect(await ownership.loseIfOrphaned(ref, await runs.get(ref, safe))).toBe(false);
    expect(await ownership.loseIfOrphaned(ref, await runs.get(ref, live))).toBe(false);
    expect(await ownership.loseIfOrphaned(ref, null)).toBe(false);
    expect((await eventTypes(ref)).filter((type) => type === 'run.lost')).toEqual([]);
  });

  it('expires a parked run fenced by the epoch it saw', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, 'w-dead', { parked: true });
    expect(await ownership.expire(ref, runId, 0)).toBe(false);
    expect(await ownership.expire(ref, runId, 1)).toBe(true);
    expect(await ownership.lose(ref, runId, 1, { reason: 'late' })).toBe(false);
    const events = await log.history(ref);
    expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.expired']);
    expect(events[3].data).toEqual({ reason: RUN_END_REASONS.expired });
    expect((await runs.get(ref, runId))?.status).toBe('expired');
  });

  it('loses a run with a caller-given reason', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, 'w-alive', { parked: true });
    expect(await ownership.lose(ref, runId, 1, { reason: 'the worker holding the parked cell shut down' })).toBe(true);
    const events = await log.history(ref);
    expect(events[3]).toMatchObject({ type: 'run.lost', data: { reason: 'the worker holding the parked cell shut down' } });
  });
});

test('pastExpiry: a recorded expiry at or before now has passed; none never does', () => {
  expect(pastExpiry('2030-01-01T00:00:00.000Z', Date.parse('2030-01-01T00:00:00.000Z'))).toBe(true);
  expect(pastExpiry('2030-01-01T00:00:00.001Z', Date.parse('2030-01-01T00:00:00.000Z'))).toBe(false);
  expect(pastExpiry(null, Date.now())).toBe(false);
});
