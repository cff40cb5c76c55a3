import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { WorkerPresence } from '@codemode/fleet';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { ParkedImageStore } from './parked-image-store';
import { RunLedger } from './run-ledger';
import { RunOwnership } from './run-ownership';
import { deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

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
  ownership = new RunOwnership(presence);
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
    await runs.append(
      ref,
      untypedAppend({
        type: 'run.parked',
        runId,
        epoch: 1,
        data: { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() },
      }),
    );
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
    const local = new RunOwnership(presence, { workerId: 'w-alive', holds: (runId) => held.has(runId) });
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
    const withImages = new RunOwnership(presence, undefined, images);
    const ref = newRef();
    // The image alone (a park writes it with run.parked: RunLedger.park): classify looks at nothing else.
    await redis.hset(keys.parkedImage(ref, 'r-imaged'), {
      image: Buffer.from([1]),
      wasmHash: 'h',
      preludeVersion: 'v',
      epoch: 1,
      host: '{}',
    });
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

  it('an unanswered leg: rebuilt when replay-safe and orphaned, owed when replay-safe and held, lost when orphaned otherwise', async () => {
    const ref = newRef();
    const orphan = await startedRun(ref, 'w-dead');
    const safe = await startedRun(ref, 'w-dead', { restartSafe: true });
    const safeLive = await startedRun(ref, 'w-alive', { restartSafe: true });
    const live = await startedRun(ref, 'w-alive');
    expect(await ownership.unansweredFate(await runs.get(ref, orphan))).toBe('lose');
    expect(await ownership.unansweredFate(await runs.get(ref, safe))).toBe('rebuild');
    expect(await ownership.unansweredFate(await runs.get(ref, safeLive))).toBe('owe');
    expect(await ownership.unansweredFate(await runs.get(ref, live))).toBe('fail');
    expect(await ownership.unansweredFate(null)).toBe('fail');
    expect(await ownership.orphanToRebuild(await runs.get(ref, safe))).toBe(true);
    expect(await ownership.orphanToRebuild(await runs.get(ref, safeLive))).toBe(false);
    expect(await ownership.orphanToRebuild(await runs.get(ref, orphan))).toBe(false);
    expect(await ownership.orphanToRebuild(null)).toBe(false);
    // Deciding writes nothing: ending is RunEnds' (run-ends.int-spec.ts).
    expect(await eventTypes(ref)).not.toContain('run.lost');
  });
});
