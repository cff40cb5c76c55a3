import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@codemode/config';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import type { ReplayJob, SessionRef } from '@codemode/contracts';
import { EventLog, KeySpace, LiveRunIndex, RunEnds, RunLedger, RunOwnership } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import { hostFailureResult } from '@codemode/cells';
import { createLogger, createWorkerMetrics } from '@codemode/telemetry';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import type { RunRecovery } from '../recovery/run-recovery.service';
import { LiveRunSweeper } from './live-run-sweeper.service';

/** SPEC §2: runs left requested or running with nobody to end them are ended by the sweep, each once. */
const prefix = testPrefix('worker', 'live-sweep');
const keys = new KeySpace(prefix);
const LEASE_MS = 1000;
let redis: Redis;
let runs: RunLedger;
let log: EventLog;
let presence: WorkerPresence;
let index: LiveRunIndex;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `ls-${++n}` });
const newRunId = (): string => `cm_${randomUUID()}`;
const request = { title: 't', code: 'return 1', restartSafe: false, awaitResults: false, limits: { ...SPEC_DEFAULT_LIMITS } };
const done = hostFailureResult('ended by its worker', 'internal_error', false);

beforeAll(async () => {
  redis = await testRedis('live-sweep');
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
  presence = new WorkerPresence(redis, keys);
  index = new LiveRunIndex(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A sweeper on worker `w-self`, which holds the runs in `held`; the rebuilds it asks for land in `rebuilds`. */
function sweeper(held: Set<string>, rebuilds: ReplayJob[] = []) {
  const ownership = new RunOwnership(presence, { workerId: 'w-self', holds: (runId) => held.has(runId) });
  const metrics = createWorkerMetrics('test');
  const logger = createLogger({ service: 'test', level: 'silent', version: 'test' });
  const ends = new RunEnds(runs, index);
  // The rebuild itself is RunRecovery's (test/chaos/idempotent-recovery.e2e-spec.ts runs it for real).
  const recovery = { replay: (job: ReplayJob) => Promise.resolve(void rebuilds.push(job)) } as unknown as RunRecovery;
  const config = { presenceTtlMs: LEASE_MS } as AppConfig;
  return { sweeper: new LiveRunSweeper(config, logger, index, runs, ownership, ends, metrics, recovery, keys), metrics };
}

async function running(ref: SessionRef, owner: string, restartSafe = false): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, { ...request, restartSafe });
  await runs.start(ref, runId, { workerId: owner, epoch: 1, replyTo: '' });
  return runId;
}

test('ends what nobody will, once; leaves runs a live owner holds, and forgets the rest', async () => {
  const ref = newRef();
  const requested = newRunId();
  await runs.request(ref, requested, request);
  const deadOwner = await running(ref, 'w-dead');
  const liveOwner = await running(ref, 'w-live');
  await presence.beat('w-live', 60_000);
  const heldHere = await running(ref, 'w-self');
  const lostHere = await running(ref, 'w-self');
  const ended = await running(ref, 'w-live');
  await runs.finish(ref, ended, { epoch: 1, type: 'run.failed', result: done });
  const all = [requested, deadOwner, liveOwner, heldHere, lostHere, ended];
  const now = Date.now();
  for (const runId of all) await index.add(ref, runId, now - 1);
  const { sweeper: sweep, metrics } = sweeper(new Set([heldHere]));

  expect(await sweep.sweep(now)).toBe(3);
  const status = async (runId: string) => (await runs.get(ref, runId))?.status;
  expect(await Promise.all(all.map(status))).toEqual(['failed', 'lost', 'running', 'running', 'lost', 'failed']);
  expect((await runs.get(ref, requested))?.lastResult).toMatchObject({
    status: 'failed',
    code: 'runtime_unavailable',
    error: 'no worker started the cell within its budget; it was not run.',
  });
  // The two held by live owners are looked at again a lease later; the rest left the index.
  expect((await index.due(now + 10 * LEASE_MS, 100)).map((d) => d.runId).sort()).toEqual([liveOwner, heldHere].sort());
  // A second sweep of the same runs ends nothing more: one terminal event each.
  for (const runId of all) await index.add(ref, runId, now - 1);
  expect(await sweep.sweep(now)).toBe(0);
  const terminals = (await log.history(ref)).filter((e) => ['run.completed', 'run.failed', 'run.lost'].includes(e.type));
  expect(terminals.map((e) => e.runId).sort()).toEqual([requested, deadOwner, lostHere, ended].sort());
  const text = await metrics.scrape();
  expect(text).toContain('codemode_stranded_runs_ended_total{outcome="abandoned"} 1');
  expect(text).toContain('codemode_stranded_runs_ended_total{outcome="lost"} 2');
});

test('looks only at runs that are due', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, request);
  const now = Date.now();
  await index.add(ref, runId, now + 60_000);
  expect(await sweeper(new Set()).sweeper.sweep(now)).toBe(0);
  expect((await runs.get(ref, runId))?.status).toBe('requested');
  await index.remove(ref, runId);
});

test('SPEC §16: a replay-safe run whose worker is gone is rebuilt by replay, not lost, and looked at again a lease later', async () => {
  const ref = newRef();
  const safe = await running(ref, 'w-dead', true);
  const unsafe = await running(ref, 'w-dead');
  const now = Date.now();
  for (const runId of [safe, unsafe]) await index.add(ref, runId, now - 1);
  const rebuilds: ReplayJob[] = [];
  expect(await sweeper(new Set(), rebuilds).sweeper.sweep(now)).toBe(1);
  expect(rebuilds).toEqual([{ ...ref, runId: safe, replyTo: expect.stringContaining(':reply:unheard:{') as string, requestedAt: now }]);
  expect((await runs.get(ref, unsafe))?.status).toBe('lost');
  // Nobody is waiting: the rebuilt leg's answer is owed to the next wait.
  expect(await runs.reserveResume(ref, safe, 'tok', 10_000)).toMatchObject({ status: 'running', answerOwed: true });
  const dueLater = (await index.due(now + 10 * LEASE_MS, 100)).map((d) => d.runId);
  expect([dueLater.includes(safe), dueLater.includes(unsafe)]).toEqual([true, false]);
  await index.remove(ref, safe);
});
