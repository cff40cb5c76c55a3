import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@codemode/config';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import type { ReplayJob, SessionRef } from '@codemode/contracts';
import { KeySpace, RunLedger, RunningLegIndex, RunOwnership } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import { hostFailureResult } from '@codemode/cells';
import { createLogger } from '@codemode/telemetry';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import type { RunRecovery } from '../recovery/run-recovery.service';
import { RunningLegs } from '../runs/running-legs.service';
import { LapsedOwnerRebuilds } from './lapsed-owner-rebuilds.service';

/** SPEC §17: a lapsed worker's running restartSafe legs are rebuilt at once, each once, with no caller. */
const prefix = testPrefix('worker', 'lapsed-owner');
const keys = new KeySpace(prefix);
const LEASE_MS = 1000;
const logger = createLogger({ service: 'test', level: 'silent', version: 'test' });
let redis: Redis;
let runs: RunLedger;
let presence: WorkerPresence;
let index: RunningLegIndex;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `lo-${++n}` });
const newRunId = (): string => `cm_${randomUUID()}`;
const request = { title: 't', code: 'return 1', restartSafe: true, awaitResults: false, limits: { ...SPEC_DEFAULT_LIMITS } };

beforeAll(async () => {
  redis = await testRedis('lapsed-owner');
  runs = new RunLedger(redis, keys);
  presence = new WorkerPresence(redis, keys);
  index = new RunningLegIndex(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/**
 * The watch on worker `self`. Its rebuilds land in `rebuilds`; each takes the run over as
 * RunRecovery does (fenced by owner and epoch), recording the runs it took in `taken` and every
 * attempt, taken or not, in `tried`.
 */
function watch(self: string, rebuilds: ReplayJob[], taken: string[] = [], tried: string[] = []): LapsedOwnerRebuilds {
  const ownership = new RunOwnership(presence, { workerId: self, holds: () => false });
  const recovery = {
    replay: async (job: ReplayJob) => {
      rebuilds.push(job);
      const ref = { tenant: job.tenant, sessionId: job.sessionId };
      const run = await runs.get(ref, job.runId);
      const from = { owner: run?.owner ?? '', epoch: run?.epoch ?? 0 };
      if ((await runs.takeOver(ref, job.runId, { workerId: self, from, reason: 'test' })).taken) taken.push(job.runId);
      tried.push(job.runId);
    },
  } as unknown as RunRecovery;
  const config = { presenceTtlMs: LEASE_MS, workerId: self } as AppConfig;
  return new LapsedOwnerRebuilds(config, logger, presence, index, runs, ownership, recovery);
}

async function running(ref: SessionRef, owner: string, restartSafe = true): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, { ...request, restartSafe });
  await runs.start(ref, runId, { workerId: owner, epoch: 1, replyTo: '' });
  return runId;
}

/** A worker that beat `agoMs` ago and whose lease is gone. */
async function lapsed(workerId: string, agoMs: number): Promise<void> {
  await redis.zadd(keys.workerQueues(), Date.now() - agoMs, workerId);
}

/** Until `done` holds (the rebuilds run in the background), for at most 5 s. */
async function settled(done: () => boolean = () => true): Promise<void> {
  const until = Date.now() + 5000;
  do await new Promise((resolve) => setTimeout(resolve, 50));
  while (!done() && Date.now() < until);
}

test("rebuilds a lapsed owner's running legs at once, owing only the answers whose caller is done, and drops the other entries", async () => {
  const ref = newRef();
  const owner = `w-dead-${n}`;
  await lapsed(owner, 2 * LEASE_MS);
  const now = Date.now();
  const waited = await running(ref, owner);
  const answered = await running(ref, owner);
  const ended = await running(ref, owner);
  await runs.finish(ref, ended, { epoch: 1, type: 'run.failed', result: hostFailureResult('x', 'internal_error', true) });
  const movedOn = await running(ref, `w-other-${n}`);
  const noRun = newRunId();
  for (const [runId, answeredBy] of [
    [waited, now + 60_000],
    [answered, now - 1],
    [ended, now + 60_000],
    [movedOn, now + 60_000],
    [noRun, now + 60_000],
  ] as const)
    await index.add(owner, { ref, runId, replyTo: `reply:api:${runId}`, answeredBy });

  const rebuilds: ReplayJob[] = [];
  const tried: string[] = [];
  expect(await watch('w-self', rebuilds, [], tried).pass(now)).toBe(2);
  await settled(() => tried.length === 2);
  // Each rebuilt leg answers the caller it was answering (the entry's channel).
  expect(rebuilds.map((job) => [job.runId, job.replyTo]).sort()).toEqual(
    [
      [waited, `reply:api:${waited}`],
      [answered, `reply:api:${answered}`],
    ].sort(),
  );
  // A caller still within its budget gets the pushed answer: nothing is owed to the next wait. One done is owed it.
  const notOwed = await runs.reserveResume(ref, waited, 'tok', 10_000);
  expect([notOwed.reserved, !notOwed.reserved && notOwed.status, 'answerOwed' in notOwed]).toEqual([false, 'running', false]);
  expect(await runs.reserveResume(ref, answered, 'tok', 10_000)).toMatchObject({ status: 'running', answerOwed: true });
  // Every entry of the lapsed owner is gone: the ones rebuilt, and the ones without a running run under it.
  expect(await index.legsOf(owner, 100)).toEqual([]);
  expect((await runs.get(ref, movedOn))?.owner).toBe(`w-other-${n}`);
});

test('leaves the legs of a live owner, its own, and an owner silent for longer than the lookback to the live-run sweep', async () => {
  const ref = newRef();
  const live = `w-live-${n}`;
  await presence.beat(live, 60_000);
  await lapsed(live, 2 * LEASE_MS);
  const longGone = `w-long-gone-${n}`;
  await lapsed(longGone, 60 * LEASE_MS);
  const self = `w-self-${n}`;
  await lapsed(self, 2 * LEASE_MS);
  const onLive = await running(ref, live);
  const onLongGone = await running(ref, longGone);
  const onSelf = await running(ref, self);
  const now = Date.now();
  await index.add(live, { ref, runId: onLive, replyTo: 'r', answeredBy: now });
  await index.add(longGone, { ref, runId: onLongGone, replyTo: 'r', answeredBy: now });
  await index.add(self, { ref, runId: onSelf, replyTo: 'r', answeredBy: now });

  const rebuilds: ReplayJob[] = [];
  expect(await watch(self, rebuilds).pass(now)).toBe(0);
  expect(rebuilds).toEqual([]);
  expect((await index.legsOf(live, 10)).map((leg) => leg.runId)).toEqual([onLive]);
  await Promise.all([index.remove(live, ref, onLive), index.remove(longGone, ref, onLongGone), index.remove(self, ref, onSelf)]);
  await presence.leave(live);
});

test('two workers that notice the same lapse at once take each leg over once (fenced by owner and epoch)', async () => {
  const ref = newRef();
  const owner = `w-dead-${n}`;
  await lapsed(owner, 2 * LEASE_MS);
  const legs = await Promise.all(Array.from({ length: 5 }, () => running(ref, owner)));
  const now = Date.now();
  for (const runId of legs) await index.add(owner, { ref, runId, replyTo: 'r', answeredBy: now + 60_000 });

  const taken: string[] = [];
  const tried: string[] = [];
  const [a, b]: ReplayJob[][] = [[], []];
  await Promise.all([watch('w-x', a, taken, tried).pass(now), watch('w-y', b, taken, tried).pass(now)]);
  // Both may ask for a rebuild of the same leg; the takeovers settle before the count is read.
  await settled(() => tried.length === a.length + b.length);
  expect([...taken].sort()).toEqual([...legs].sort());
  const owners = await Promise.all(legs.map(async (runId) => (await runs.get(ref, runId))?.owner));
  expect(owners.every((o) => o === 'w-x' || o === 'w-y')).toBe(true);
});

test("a worker indexes a replay-safe leg beside the script that takes it, and only a leg it took; never another run's", async () => {
  const ref = newRef();
  const self = `w-me-${n}`;
  const legs = new RunningLegs({ workerId: self, replyGraceMs: 1000, presenceTtlMs: LEASE_MS } as AppConfig, logger, index);
  const safe = newRunId();
  await runs.request(ref, safe, request);
  const before = Date.now();
  const claim = () => runs.start(ref, safe, { workerId: self, epoch: 1, replyTo: 'reply:api' });
  const started = await legs.beside({ ref, runId: safe, restartSafe: true, timeoutMs: 5000 }, 'reply:api', claim, (c) => c.started);
  expect(started).toEqual({ started: true });
  const [leg] = await index.legsOf(self, 10);
  expect(leg).toMatchObject({ ref, runId: safe, replyTo: 'reply:api' });
  // Its caller's budget, the grace and a lease from the claim.
  expect(leg.answeredBy).toBeGreaterThanOrEqual(before + 5000 + 1000 + LEASE_MS);
  // The same claim again is not taken (the run is running): its entry goes.
  await legs.beside({ ref, runId: safe, restartSafe: true, timeoutMs: 5000 }, 'reply:api', claim, (c) => c.started);
  expect(await index.legsOf(self, 10)).toEqual([]);

  const plain = newRunId();
  await runs.request(ref, plain, { ...request, restartSafe: false });
  const plainClaim = () => runs.start(ref, plain, { workerId: self, epoch: 1, replyTo: 'reply:api' });
  await legs.beside({ ref, runId: plain, restartSafe: false, timeoutMs: 5000 }, 'reply:api', plainClaim, (c) => c.started);
  expect(await index.legsOf(self, 10)).toEqual([]);
});
