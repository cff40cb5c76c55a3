import type { AppConfig } from '@codemode/config';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { RUN_END_REASONS, type CellSpec, type CodeModeResult, type ResumeJob, type SessionRef } from '@codemode/contracts';
import {
  ParkedRunHoldings,
  RunEnds,
  StaleEpochError,
  StoreUnavailableError,
  type AppendInput,
  type EventLog,
  type LiveRunIndex,
  type RunLedger,
} from '@codemode/events';
import { ABORTED_MESSAGE, emptyTelemetry } from '@codemode/cells';
import type { SandboxPool } from '@codemode/sandbox';
import { createLogger, createWorkerMetrics } from '@codemode/telemetry';
import type { Redis } from 'ioredis';
import type { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import type { RunToolHost } from '../tools/run-tool-host';
import { HeldRunJobs } from './held-run-jobs.service';
import type { Leg, LegRunner } from './leg-runner.service';
import { ResidentRuns } from './resident-runs.service';
import type { RunningLegs } from './running-legs.service';
import { WorkerRun } from './worker-run';

/** No index of running legs (RunningLegs has its own int-spec): takes the leg as asked. */
const notIndexed = {
  beside: <T>(_run: unknown, _replyTo: string, take: () => Promise<T>) => take(),
  ended: () => undefined,
} as unknown as RunningLegs;

/**
 * The worker's run state machine driven directly: ResidentRuns and HeldRunJobs over a fake sandbox
 * pool (which VMs it has, its eviction policy and lost-thread listener) and an in-memory ledger
 * (what was written for each run), with the races the chaos suites found.
 */

const WORKER = 'w-self';
const ref: SessionRef = { tenant: 'acme', sessionId: 's1' };
const logger = createLogger({ service: 'test', level: 'silent', version: 'test' });

/** What the ledger was asked to write, in order (`held`: a run's held tool events landing, RunToolHost.landed). */
type Written = { kind: 'finish' | 'lost' | 'expired' | 'released' | 'resumed' | 'held'; runId: string; epoch: number; detail?: unknown };

class MemoryLedger {
  readonly written: Written[] = [];
  /** What `resume` (the owner's take) does next: answer, or throw. */
  take: () => Promise<boolean> = () => Promise.resolve(true);
  status = new Map<string, { status: string; owner: string | null; epoch: number }>();

  resume(_ref: SessionRef, runId: string, opts: { epoch: number }): Promise<boolean> {
    return this.take().then((taken) => {
      if (taken) this.written.push({ kind: 'resumed', runId, epoch: opts.epoch });
      return taken;
    });
  }
  finish(_ref: SessionRef, runId: string, opts: { epoch: number; result: CodeModeResult }): Promise<{ eventId: string }> {
    this.written.push({ kind: 'finish', runId, epoch: opts.epoch, detail: opts.result });
    return Promise.resolve({ eventId: '1-0' });
  }
  append(_ref: SessionRef, input: AppendInput): Promise<string> {
    const kind = input.type === 'run.lost' ? 'lost' : input.type === 'run.expired' ? 'expired' : undefined;
    if (kind)
      this.written.push({ kind, runId: input.runId ?? '', epoch: input.epoch ?? 0, detail: (input.data as { reason?: string }).reason });
    return Promise.resolve('1-0');
  }
  release(_ref: SessionRef, runId: string, opts: { epoch: number; reason: string }): Promise<boolean> {
    this.written.push({ kind: 'released', runId, epoch: opts.epoch, detail: opts.reason });
    return Promise.resolve(true);
  }
  get(_ref: SessionRef, runId: string): Promise<unknown> {
    const now = this.status.get(runId);
    return Promise.resolve(now ? { runId, ...now } : null);
  }
}

class FakePool {
  readonly vms = new Set<string>();
  readonly hostWork = new Set<string>();
  lost: ((runIds: string[], reason: string) => void) | undefined;
  eviction: { evictable: (runId: string) => boolean; evicted: (runId: string) => void } | undefined;
  onRunsLost(listener: (runIds: string[], reason: string) => void): void {
    this.lost = listener;
  }
  evictWith(policy: { evictable: (runId: string) => boolean; evicted: (runId: string) => void }): void {
    this.eviction = policy;
  }
  discard(runId: string): boolean {
    return this.vms.delete(runId);
  }
  hasHostWork(runId: string): boolean {
    return this.hostWork.has(runId);
  }
  keepWithinBudget(): void {}
  platformPending(): string[] {
    return [];
  }
}

interface Parts {
  ledger: MemoryLedger;
  pool: FakePool;
  resident: ResidentRuns;
  jobs: HeldRunJobs;
  legs: Leg[];
  quotaReleased: string[];
  imagesDropped: string[];
}

function parts(): Parts {
  const ledger = new MemoryLedger();
  const pool = new FakePool();
  const quotaReleased: string[] = [];
  const imagesDropped: string[] = [];
  const quotas = {
    freeParked: (_tenant: string, runId: string) => Promise.resolve(void quotaReleased.push(runId)),
  };
  const images = { delete: (_r: SessionRef, runId: string) => Promise.resolve(void imagesDropped.push(runId)) };
  const limits = {
    freeParked: (_r: SessionRef, runId: string) => quotaReleased.push(runId),
    recountParked: () => Promise.resolve(),
  } as unknown as WorkerTenantLimits;
  const live = { add: () => Promise.resolve(), remove: () => Promise.resolve() } as unknown as LiveRunIndex;
  const runLedger = ledger as unknown as RunLedger;
  const ends = new RunEnds(runLedger, live, new ParkedRunHoldings(quotas, images, () => undefined));
  const config = { workerId: WORKER } as AppConfig;
  const sandbox = pool as unknown as SandboxPool;
  const resident = new ResidentRuns(config, logger, runLedger, sandbox, limits, ends);
  const legs: Leg[] = [];
  // The leg runner records what leg it was asked for; a leg ends the run (completed), as RunOutcomes would.
  const legRunner = {
    run: async (run: WorkerRun, leg: Leg): Promise<CodeModeResult> => {
      legs.push(leg);
      const result = leg.kind === 'none' ? (leg.outcome as unknown as CodeModeResult) : completed;
      await ends.finish(run, result, { replyTo: 'reply' });
      resident.ended(run);
      return result;
    },
  } as unknown as LegRunner;
  const metrics = createWorkerMetrics('test');
  const jobs = new HeldRunJobs(
    config,
    logger,
    {} as Redis,
    runLedger,
    {} as EventLog,
    sandbox,
    resident,
    legRunner,
    ends,
    metrics,
    notIndexed,
  );
  return { ledger, pool, resident, jobs, legs, quotaReleased, imagesDropped };
}

const completed: CodeModeResult = {
  status: 'completed',
  result: 1,
  output: [],
  outputTruncated: false,
  replaySafe: false,
  telemetry: emptyTelemetry(),
} as unknown as CodeModeResult;

const spec = (restartSafe = false): CellSpec => ({
  title: 't',
  code: 'await yield_control()',
  restartSafe,
  awaitResults: false,
  limits: { ...SPEC_DEFAULT_LIMITS, timeoutMs: 200 },
  shell: {} as CellSpec['shell'],
  agentId: null,
});
const host = { telemetry: () => emptyTelemetry(), landed: () => Promise.resolve() } as unknown as RunToolHost;

/** A run whose first leg parked here: its VM in the pool, its park recorded, a quota place held. */
function parkedRun(
  p: Parts,
  runId: string,
  opts: { imaged?: boolean; restartSafe?: boolean; expiresAt?: number; host?: RunToolHost } = {},
): WorkerRun {
  const run = new WorkerRun(ref, runId, 1, spec(opts.restartSafe), opts.host ?? host);
  p.resident.begin(run);
  p.pool.vms.add(runId);
  run.holdsParkedQuota = true;
  run.imaged = opts.imaged ?? false;
  run.expiresAt = opts.expiresAt ?? Date.now() + 60_000;
  p.resident.park(run);
  return run;
}

const resumeJob = (runId: string): ResumeJob => ({
  tenant: ref.tenant,
  sessionId: ref.sessionId,
  runId,
  token: 'tok',
  replyTo: 'reply',
  input: null,
  requestedAt: Date.now(),
});
const abortJob = (runId: string) => ({ tenant: ref.tenant, sessionId: ref.sessionId, runId, replyTo: 'reply' });

/** A take the test answers when it wants. */
function heldTake(ledger: MemoryLedger): { answer: (taken: boolean) => void; fail: (error: Error) => void } {
  let answer: (taken: boolean) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  ledger.take = () =>
    new Promise<boolean>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
  return { answer: (taken) => answer(taken), fail: (error) => fail(error) };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('a resume of a run parked here', () => {
  it('takes it, runs its resume leg, and it ends once', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1');
    expect(await p.jobs.resume(resumeJob('r1'))).toBe(true);
    expect(p.legs).toEqual([{ kind: 'resume' }]);
    expect(p.ledger.written.map((w) => w.kind)).toEqual(['resumed', 'finish']);
    expect(run.residency).toBe('gone');
    expect(p.resident.get('r1')).toBeUndefined();
    expect(p.quotaReleased).toEqual(['r1']);
    expect(p.imagesDropped).toEqual(['r1']);
  });

  it('answers false for a run not parked here (recovery’s turn), and writes nothing', async () => {
    const p = parts();
    expect(await p.jobs.resume(resumeJob('nope'))).toBe(false);
    expect(p.ledger.written).toEqual([]);
  });

  it('abort while taking: the take lands, the leg ends aborted without running, the run ends once', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1');
    const take = heldTake(p.ledger);
    const resumed = p.jobs.resume(resumeJob('r1'));
    await tick();
    expect(run.residency).toBe('resuming');
    await p.jobs.abort(abortJob('r1'));
    // The abort discarded the VM and wrote nothing itself: the resume's leg records the end.
    expect(p.pool.vms.has('r1')).toBe(false);
    expect(p.ledger.written).toEqual([]);
    expect(run.abortRequested).toBe(true);
    take.answer(true);
    expect(await resumed).toBe(true);
    expect(p.legs).toHaveLength(1);
    expect(p.legs[0]).toMatchObject({ kind: 'none', outcome: { status: 'failed', code: 'aborted', error: ABORTED_MESSAGE } });
    expect(p.ledger.written.map((w) => w.kind)).toEqual(['resumed', 'finish']);
    expect(run.residency).toBe('gone');
  });

  it('abort while taking, the take refused: the run leaves the worker and is not parked again', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1');
    const take = heldTake(p.ledger);
    const resumed = p.jobs.resume(resumeJob('r1'));
    await tick();
    await p.jobs.abort(abortJob('r1'));
    take.answer(false);
    expect(await resumed).toBe(true);
    expect(p.legs).toEqual([]);
    expect(run.residency).toBe('gone');
    expect(p.resident.parked('r1')).toBeUndefined();
    // The API ends a run whose owner did not take the abort's resume: this worker writes nothing.
    expect(p.ledger.written).toEqual([]);
  });

  it('a take refused (the wait gave up) parks the run again, with its expiry', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1');
    p.ledger.take = () => Promise.resolve(false);
    expect(await p.jobs.resume(resumeJob('r1'))).toBe(true);
    expect(run.residency).toBe('parked');
    expect(p.resident.parked('r1')).toBe(run);
    expect(p.pool.vms.has('r1')).toBe(true);
    expect(p.ledger.written).toEqual([]);
  });

  it('owner gone mid-resume (the take finds a newer epoch): the stale VM is dropped, nothing written or given back', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1');
    p.ledger.take = () => Promise.reject(new StaleEpochError('r1', 1, 2));
    await expect(p.jobs.resume(resumeJob('r1'))).rejects.toBeInstanceOf(StaleEpochError);
    expect(run.residency).toBe('gone');
    expect(p.pool.vms.has('r1')).toBe(false);
    expect(p.ledger.written).toEqual([]);
    // Its quota place is the new owner's now.
    expect(p.quotaReleased).toEqual([]);
  });

  it('Redis away for the whole take budget: the run stays parked here for the next wait', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1');
    p.ledger.take = () => Promise.reject(new StoreUnavailableError(new Error('ECONNREFUSED')));
    await expect(p.jobs.resume(resumeJob('r1'))).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(run.residency).toBe('parked');
    expect(p.pool.vms.has('r1')).toBe(true);
  });
});

describe('what becomes of a parked run no wait resumes', () => {
  it('abort of a parked run ends it aborted once, and gives back its quota place and image', async () => {
    const p = parts();
    const run = parkedRun(p, 'r1', { imaged: true });
    await p.jobs.abort(abortJob('r1'));
    expect(run.residency).toBe('gone');
    expect(p.ledger.written).toHaveLength(1);
    expect(p.ledger.written[0]).toMatchObject({ kind: 'finish', epoch: 1, detail: { status: 'failed', code: 'aborted' } });
    expect(p.quotaReleased).toEqual(['r1']);
    expect(p.imagesDropped).toEqual(['r1']);
    await p.jobs.abort(abortJob('r1'));
    expect(p.ledger.written).toHaveLength(1);
  });

  it('abort of a run executing a leg discards its VM only: its leg records the aborted outcome', async () => {
    const p = parts();
    const run = new WorkerRun(ref, 'r1', 1, spec(), host);
    p.resident.begin(run);
    p.pool.vms.add('r1');
    await p.jobs.abort(abortJob('r1'));
    expect(p.pool.vms.has('r1')).toBe(false);
    expect(run.residency).toBe('running');
    expect(p.ledger.written).toEqual([]);
  });

  it('eviction: only a parked run with an image and no call in progress may leave, and it is handed over', async () => {
    const p = parts();
    const imaged = parkedRun(p, 'img', { imaged: true });
    parkedRun(p, 'mem');
    const evictable = p.pool.eviction!.evictable;
    expect(evictable('img')).toBe(true);
    expect(evictable('mem')).toBe(false);
    // A tool call of its in progress: evicting would abort the call.
    p.pool.hostWork.add('img');
    expect(evictable('img')).toBe(false);
    p.pool.hostWork.delete('img');
    // Taken for a resume: it cannot leave under the take.
    const take = heldTake(p.ledger);
    const resumed = p.jobs.resume(resumeJob('img'));
    await tick();
    expect(evictable('img')).toBe(false);
    take.answer(false);
    await resumed;
    expect(evictable('img')).toBe(true);
    p.pool.vms.delete('img');
    p.pool.eviction!.evicted('img');
    await tick();
    expect(imaged.residency).toBe('gone');
    expect(p.ledger.written).toEqual([{ kind: 'released', runId: 'img', epoch: 1, detail: expect.stringContaining('evicted') }]);
    // Still parked (in Redis): its quota place stays.
    expect(p.quotaReleased).toEqual([]);
  });

  it('thread lost: a parked run with an image is released, one without is lost; a running leg is its own runner’s', async () => {
    const p = parts();
    parkedRun(p, 'img', { imaged: true });
    parkedRun(p, 'mem');
    const running = new WorkerRun(ref, 'leg', 1, spec(), host);
    p.resident.begin(running);
    p.pool.lost!(['img', 'mem', 'leg'], 'thread died');
    await tick();
    expect(p.ledger.written).toEqual(
      expect.arrayContaining([
        { kind: 'released', runId: 'img', epoch: 1, detail: 'thread died' },
        { kind: 'lost', runId: 'mem', epoch: 1, detail: 'thread died' },
      ]),
    );
    expect(p.ledger.written).toHaveLength(2);
    expect(running.residency).toBe('running');
    expect(p.quotaReleased).toEqual(['mem']);
  });

  it('shutdown: imaged and replay-safe parked runs are handed over, the others lost; a run being resumed is left to its resume', async () => {
    const p = parts();
    parkedRun(p, 'img', { imaged: true });
    parkedRun(p, 'safe', { restartSafe: true });
    parkedRun(p, 'mem');
    const busy = parkedRun(p, 'busy', { imaged: true });
    heldTake(p.ledger);
    void p.jobs.resume(resumeJob('busy'));
    await tick();
    await p.resident.giveUpAll('shutting down');
    const kinds = Object.fromEntries(p.ledger.written.map((w) => [w.runId, w.kind]));
    expect(kinds).toEqual({ img: 'released', safe: 'released', mem: 'lost' });
    expect(p.pool.vms.has('img')).toBe(false);
    expect(p.pool.vms.has('safe')).toBe(false);
    expect(busy.residency).toBe('resuming');
  });

  it("shutdown: the events held for a parked run's reads are written before its release or its end", async () => {
    const p = parts();
    // Its held events land a turn later, as a write to Redis would.
    const holding = (runId: string) =>
      ({
        ...host,
        landed: () => tick().then(() => void p.ledger.written.push({ kind: 'held', runId, epoch: 1 })),
      }) as unknown as RunToolHost;
    parkedRun(p, 'img', { imaged: true, host: holding('img') });
    parkedRun(p, 'mem', { host: holding('mem') });
    await p.resident.giveUpAll('shutting down');
    const written = p.ledger.written.map((w) => `${w.runId} ${w.kind}`);
    expect([...written].sort()).toEqual(['img held', 'img released', 'mem held', 'mem lost']);
    expect(written.indexOf('img held')).toBeLessThan(written.indexOf('img released'));
    expect(written.indexOf('mem held')).toBeLessThan(written.indexOf('mem lost'));
  });

  it('expiry: a parked run past its expiry ends run.expired and its VM goes; one being resumed does not expire', async () => {
    jest.useFakeTimers({ now: 1_000 });
    try {
      const p = parts();
      parkedRun(p, 'old', { expiresAt: 2_000 });
      const taken = parkedRun(p, 'taken', { expiresAt: 2_000 });
      heldTake(p.ledger);
      void p.jobs.resume(resumeJob('taken'));
      await Promise.resolve();
      jest.advanceTimersByTime(1_500);
      // The end's few promise turns (the held events' landing, the ledger's write, the quota's release).
      for (let turn = 0; turn < 10; turn += 1) await Promise.resolve();
      expect(p.ledger.written).toEqual([{ kind: 'expired', runId: 'old', epoch: 1, detail: RUN_END_REASONS.expired }]);
      expect(p.pool.vms.has('old')).toBe(false);
      expect(p.quotaReleased).toEqual(['old']);
      expect(taken.residency).toBe('resuming');
    } finally {
      jest.useRealTimers();
    }
  });

  it('after a lapsed lease: keeps what is still this worker’s at its epoch, drops the rest without writing', async () => {
    const p = parts();
    parkedRun(p, 'mine');
    const taken = parkedRun(p, 'takenOver');
    p.ledger.status.set('mine', { status: 'waiting', owner: WORKER, epoch: 1 });
    p.ledger.status.set('takenOver', { status: 'waiting', owner: 'w-other', epoch: 2 });
    expect(await p.resident.reconcile()).toEqual({ kept: 1, dropped: 1 });
    expect(p.resident.parked('mine')).toBeDefined();
    expect(taken.residency).toBe('gone');
    expect(p.pool.vms.has('takenOver')).toBe(false);
    expect(p.ledger.written).toEqual([]);
  });

  it('a new leg of a run still here at an older epoch drops the stale one first', () => {
    const p = parts();
    const stale = parkedRun(p, 'r1');
    const restored = new WorkerRun(ref, 'r1', 2, spec(), host);
    p.resident.begin(restored);
    expect(stale.residency).toBe('gone');
    expect(p.resident.get('r1')).toBe(restored);
    expect(p.pool.vms.has('r1')).toBe(false);
  });
});
