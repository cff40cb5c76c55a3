import type { AppConfig } from '@codemode/config';
import type { CodeModeResult, Limits, RunStatus, RunView, SessionRef } from '@codemode/contracts';
import { LiveRunIndex, RunEnds, RunLedger, RunOwnership, RunReplies } from '@codemode/events';
import { emptyTelemetry, owedAnswerResult, RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';
import { createApiMetrics, METRIC, type Logger } from '@codemode/telemetry';
import type { ApprovalHold } from '../../approvals/approval-hold';
import type { CellQueue } from '../../queues/cell-queue';
import { endedRunError, NO_ANSWER_ERROR } from '../host-results';
import { CallAnswers, type CallLeg } from './call-answers';
import { answerAfterGap, storedAnswer, waitAnswerOf, waitingAgain } from './stored-answers';

const REF: SessionRef = { tenant: 't1', sessionId: 's1' };
const RUN_ID = 'cm_1';
const GRACE_MS = 500;
const LEASE_MS = 1000;
const LIMITS = { timeoutMs: 2000 } as Limits;
const CHANNEL = 'replies:t1:s1';

const completed: CodeModeResult = { status: 'completed', value: 42, replaySafe: true, telemetry: emptyTelemetry() };
const waiting: CodeModeResult = {
  status: 'waiting',
  runId: RUN_ID,
  reason: 'pending_tools',
  output: [{ type: 'text', text: 'said before parking' }],
  replaySafe: true,
  telemetry: emptyTelemetry(),
};

const view = (status: RunStatus, over: Partial<RunView> = {}): RunView => ({
  runId: RUN_ID,
  sessionId: REF.sessionId,
  title: 't',
  status,
  restartSafe: true,
  owner: 'w-dead',
  epoch: 7,
  createdAt: '',
  startedAt: null,
  endedAt: null,
  parkedAt: null,
  expiresAt: null,
  updatedAt: '',
  lastResult: null,
  ...over,
});

/** The stores and queues CallAnswers drives, as plain records of what it asked. Liveness is the only real decision input: RunOwnership is the real one. */
class Fakes {
  run: RunView | null = view('running');
  /** Whether owe-answer marks the answer owed; false: the leg parked or ended first, as `endedMeanwhile`. */
  owes = true;
  endedMeanwhile: RunView | null = null;
  readonly alive = new Set<string>(['w-live']);
  readonly liveAdds: { runId: string; due: number }[] = [];
  readonly replays: { runId: string; replyTo: string }[] = [];
  readonly lost: { runId: string; epoch: number }[] = [];
  readonly oweCalls: string[] = [];
  readonly logged: string[] = [];
  /** Each logged line's fields, beside `logged`. */
  readonly loggedFields: unknown[] = [];
  held = false;
  readonly metrics = createApiMetrics('test');
  private push: ((r: CodeModeResult) => void) | undefined;
  private started: (() => void) | undefined;
  private gap: (() => void) | undefined;

  readonly answers = new CallAnswers(
    { replyGraceMs: GRACE_MS, presenceTtlMs: LEASE_MS } as AppConfig,
    this.logger(),
    {
      get: () => Promise.resolve(this.run),
      oweAnswer: (_ref: SessionRef, runId: string) => {
        this.oweCalls.push(runId);
        if (!this.owes) this.run = this.endedMeanwhile;
        return Promise.resolve(this.owes);
      },
    } as unknown as RunLedger,
    {
      add: (_ref: SessionRef, runId: string, due: number) => Promise.resolve(void this.liveAdds.push({ runId, due })),
    } as unknown as LiveRunIndex,
    {
      channelFor: () => CHANNEL,
      waitFor: (_runId: string, opts: { onStarted?: () => void; onGap?: () => void }) => {
        this.started = opts.onStarted;
        this.gap = opts.onGap;
        return new Promise<CodeModeResult>((resolve) => (this.push = resolve));
      },
    } as unknown as RunReplies,
    {
      replay: (job: { runId: string; replyTo: string }) =>
        Promise.resolve(String(this.replays.push({ runId: job.runId, replyTo: job.replyTo }))),
    } as unknown as CellQueue,
    new RunOwnership({ isAlive: (id) => Promise.resolve(this.alive.has(id)) }),
    {
      lose: (e: { runId: string; epoch: number }) => Promise.resolve(void this.lost.push({ runId: e.runId, epoch: e.epoch })),
    } as unknown as RunEnds,
    { holdsRun: () => Promise.resolve(this.held) } as unknown as ApprovalHold,
    this.metrics,
  );

  /** The worker claims the leg (`started` on the reply channel). */
  start(): void {
    this.started?.();
  }

  /** The reply subscriptions came back after a reconnect: a reply may have been lost. */
  subscriptionsBack(): void {
    this.gap?.();
  }

  /** The worker pushes the leg's answer. */
  answer(result: CodeModeResult): void {
    this.push?.(result);
  }

  leg(over: Partial<CallLeg> = {}): CallLeg {
    return { ref: REF, runId: RUN_ID, call: 'wait', restartSafe: true, log: this.logger(), ...over };
  }

  private logger(): Logger {
    const note = (fields: unknown, message?: string): void => {
      this.logged.push(typeof fields === 'string' ? fields : (message ?? ''));
      this.loggedFields.push(typeof fields === 'string' ? {} : fields);
    };
    const log = { warn: note, error: note, info: note, debug: note, child: () => log } as unknown as Logger;
    return log;
  }
}

describe('the final-answer rule (stored-answers)', () => {
  it('a run that parked or ended answers what it stored; one still requested or running has no answer yet', () => {
    for (const status of ['waiting', 'completed', 'failed', 'expired', 'lost'] as const)
      expect([status, storedAnswer(view(status, { lastResult: completed }))]).toEqual([status, completed]);
    for (const status of ['requested', 'running'] as const)
      expect([status, storedAnswer(view(status, { lastResult: completed }))]).toEqual([status, undefined]);
    expect(storedAnswer(view('completed'))).toBeUndefined();
    expect(storedAnswer(null)).toBeUndefined();
  });

  it('a wait on a run that ended without an answer of its own (its last is the old waiting) is told it ended', () => {
    expect(waitAnswerOf(view('expired', { lastResult: waiting }), false)).toMatchObject({
      status: 'failed',
      error: endedRunError(REF.sessionId, RUN_ID),
      replaySafe: false,
    });
    expect(waitAnswerOf(view('waiting', { lastResult: waiting }), true)).toBe(waiting);
    expect(waitAnswerOf(view('completed', { lastResult: completed }), true)).toBe(completed);
    expect(waitAnswerOf(view('running', { lastResult: waiting }), true)).toBeUndefined();
  });

  it('a wait not taken in time answers the last waiting again, without the output it already returned', () => {
    const again = waitingAgain(view('waiting', { lastResult: waiting }), true);
    expect(again).toEqual({ status: 'waiting', runId: RUN_ID, reason: 'pending_tools', replaySafe: true, telemetry: emptyTelemetry() });
    expect(waitingAgain(view('lost', { lastResult: completed }), false)).toMatchObject({ error: endedRunError(REF.sessionId, RUN_ID) });
    expect(waitingAgain(null, false)).toMatchObject({ error: RUN_UNAVAILABLE_MESSAGE });
  });
});

describe('what a call answers from its run after a reply gap (answerAfterGap)', () => {
  it('an exec takes a parked or ended run’s answer; a wait takes only an ended one; requested and running wait on', () => {
    const exec = { call: 'exec', restartSafe: false } as const;
    const wait = { call: 'wait', restartSafe: true } as const;
    expect(answerAfterGap(exec, view('waiting', { lastResult: waiting }))).toBe(waiting);
    expect(answerAfterGap({ ...exec, awaitResults: true }, view('waiting', { lastResult: waiting }))).toBeUndefined();
    expect(answerAfterGap(wait, view('waiting', { lastResult: waiting }))).toBeUndefined();
    for (const leg of [exec, wait]) {
      expect(answerAfterGap(leg, view('completed', { lastResult: completed }))).toBe(completed);
      expect(answerAfterGap(leg, view('running', { lastResult: waiting }))).toBeUndefined();
      expect(answerAfterGap(leg, view('requested'))).toBeUndefined();
      expect(answerAfterGap(leg, null)).toBeUndefined();
    }
    expect(answerAfterGap(wait, view('lost', { lastResult: waiting }))).toMatchObject({ error: endedRunError(REF.sessionId, RUN_ID) });
  });
});

describe('CallAnswers', () => {
  let f: Fakes;
  beforeEach(() => {
    jest.useFakeTimers({ now: 10_000 });
    f = new Fakes();
  });
  afterEach(() => jest.useRealTimers());

  describe('markLive and follow: one deadline per call', () => {
    it('indexes the leg as due a lease after its answer budget plus the grace', () => {
      f.answers.markLive(REF, RUN_ID, 3000);
      expect(f.liveAdds).toEqual([{ runId: RUN_ID, due: 10_000 + 3000 + GRACE_MS + LEASE_MS }]);
    });

    it('answers what the worker pushes', async () => {
      const deadline = f.answers.follow(f.leg(), { startMs: 1000, answerMs: 1000 }, { onStartOverdue: jest.fn(), onNoAnswer: jest.fn() });
      f.answer(completed);
      await expect(deadline.outcome).resolves.toBe(completed);
      expect(deadline.signal.aborted).toBe(true);
    });

    it('a leg not started in its budget is given to onStartOverdue; null keeps waiting, on the answer budget plus grace', async () => {
      const onStartOverdue = jest.fn(() => Promise.resolve(null));
      const onNoAnswer = jest.fn(() => Promise.resolve(completed));
      const deadline = f.answers.follow(f.leg(), { startMs: 1000, answerMs: 2000 }, { onStartOverdue, onNoAnswer });
      await jest.advanceTimersByTimeAsync(1000);
      expect(onStartOverdue).toHaveBeenCalledTimes(1);
      await jest.advanceTimersByTimeAsync(2000 + GRACE_MS - 1);
      expect(onNoAnswer).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      await expect(deadline.outcome).resolves.toBe(completed);
    });

    it('reads the run when the subscriptions come back: an ended run answers at once, a running one keeps waiting', async () => {
      const onNoAnswer = jest.fn(() => Promise.resolve(waiting));
      const deadline = f.answers.follow(
        f.leg({ call: 'exec' }),
        { startMs: 1000, answerMs: 1000 },
        { onStartOverdue: jest.fn(), onNoAnswer },
      );
      f.start();
      f.run = view('running');
      f.subscriptionsBack();
      await jest.advanceTimersByTimeAsync(0);
      expect(deadline.signal.aborted).toBe(false);
      f.run = view('completed', { lastResult: completed });
      f.subscriptionsBack();
      await expect(deadline.outcome).resolves.toBe(completed);
      expect(onNoAnswer).not.toHaveBeenCalled();
    });

    it('a started leg held for an approval (SPEC §11) is given its budget again', async () => {
      const onNoAnswer = jest.fn(() => Promise.resolve(completed));
      f.answers.follow(f.leg(), { startMs: 1000, answerMs: 1000 }, { onStartOverdue: jest.fn(), onNoAnswer });
      f.start();
      f.held = true;
      await jest.advanceTimersByTimeAsync(1000 + GRACE_MS);
      expect(onNoAnswer).not.toHaveBeenCalled();
      f.held = false;
      await jest.advanceTimersByTimeAsync(1000 + GRACE_MS);
      expect(onNoAnswer).toHaveBeenCalledTimes(1);
    });
  });

  describe('unanswered: a leg that did not answer within budget plus grace', () => {
    it("the run's stored answer wins over any fate", async () => {
      f.run = view('waiting', { lastResult: waiting });
      await expect(f.answers.unanswered(f.leg())).resolves.toBe(waiting);
      expect([f.replays, f.lost, f.oweCalls]).toEqual([[], [], []]);
    });

    it("a wait's replay-safe leg whose worker is gone is rebuilt by replay, and its answer owed to the next wait", async () => {
      await expect(f.answers.unanswered(f.leg())).resolves.toEqual(owedAnswerResult(RUN_ID));
      expect(f.replays).toEqual([{ runId: RUN_ID, replyTo: CHANNEL }]);
      expect(f.oweCalls).toEqual([RUN_ID]);
    });

    it("an exec's replay-safe leg whose worker is gone is owed but not rebuilt here (its cell job is re-delivered)", async () => {
      await expect(f.answers.unanswered(f.leg({ call: 'exec' }))).resolves.toEqual(owedAnswerResult(RUN_ID));
      expect(f.replays).toEqual([]);
    });

    it('a replay-safe leg still running under a live worker is owed, not rebuilt', async () => {
      f.run = view('running', { owner: 'w-live' });
      await expect(f.answers.unanswered(f.leg())).resolves.toEqual(owedAnswerResult(RUN_ID));
      expect(f.replays).toEqual([]);
    });

    it('an awaitResults exec never answers waiting (SPEC §3): runtime_unavailable, nothing owed', async () => {
      const answer = await f.answers.unanswered(f.leg({ call: 'exec', awaitResults: true }));
      expect(answer).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: NO_ANSWER_ERROR, replaySafe: true });
      expect([f.oweCalls, f.lost]).toEqual([[], []]);
    });

    it('a leg that parked or ended while its answer was being owed is answered from the run', async () => {
      f.owes = false;
      f.endedMeanwhile = view('completed', { lastResult: completed });
      await expect(f.answers.unanswered(f.leg())).resolves.toBe(completed);
    });

    it('a leg that is not replay-safe is lost (fenced by its epoch) when its worker is gone', async () => {
      f.run = view('running', { restartSafe: false });
      const answer = await f.answers.unanswered(f.leg({ restartSafe: false }));
      expect(answer).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: NO_ANSWER_ERROR, replaySafe: false });
      expect(f.lost).toEqual([{ runId: RUN_ID, epoch: 7 }]);
    });

    it('legs left unanswered together log one line a second of each kind, with how many were held back (no storm)', async () => {
      const unanswered = 'the worker running the leg did not answer within its budget';
      const owed = 'the replay-safe leg did not answer within its budget; answering waiting, its outcome goes to the next wait';
      f.run = view('running', { restartSafe: false, owner: 'w-live' });
      for (let i = 0; i < 5; i++) await f.answers.unanswered(f.leg({ restartSafe: false }));
      f.run = view('running');
      for (let i = 0; i < 3; i++) await f.answers.unanswered(f.leg());
      expect(f.logged).toEqual([unanswered, owed]);
      jest.advanceTimersByTime(1_000);
      f.run = view('running', { restartSafe: false, owner: 'w-live' });
      await f.answers.unanswered(f.leg({ restartSafe: false }));
      expect(f.logged).toEqual([unanswered, owed, unanswered]);
      expect(f.loggedFields).toEqual([
        { fate: 'fail', suppressed: 0 },
        { fate: 'rebuild', suppressed: 0 },
        { fate: 'fail', suppressed: 4 },
      ]);
      // Every leg is counted, however few were logged.
      const counted = (await f.metrics.unansweredLegs.get()).values.map(({ labels, value }) => [labels.fate, value]);
      expect(Object.fromEntries(counted)).toEqual({ rebuild: 3, owe: 0, lose: 0, fail: 6 });
      expect(await f.metrics.registry.metrics()).toContain(`${METRIC.unansweredLegsTotal}{fate="fail"} 6`);
    });

    it('a leg that is not replay-safe under a live worker is left to it', async () => {
      f.run = view('running', { restartSafe: false, owner: 'w-live' });
      await expect(f.answers.unanswered(f.leg({ restartSafe: false }))).resolves.toMatchObject({ error: NO_ANSWER_ERROR });
      expect([f.lost, f.oweCalls, f.replays]).toEqual([[], [], []]);
    });
  });

  describe('recoverOrphan: a wait finds the run running under a worker that is gone', () => {
    it('loses a run that is not replay-safe and answers that it ended', async () => {
      f.run = view('running', { restartSafe: false });
      const answer = await f.answers.recoverOrphan(REF, RUN_ID, false, LIMITS);
      expect(answer).toMatchObject({ status: 'failed', error: endedRunError(REF.sessionId, RUN_ID) });
      expect(f.lost).toEqual([{ runId: RUN_ID, epoch: 7 }]);
    });

    it('rebuilds a replay-safe run and answers what the rebuilt leg pushes', async () => {
      const answer = f.answers.recoverOrphan(REF, RUN_ID, true, LIMITS);
      await jest.advanceTimersByTimeAsync(0);
      expect(f.replays).toEqual([{ runId: RUN_ID, replyTo: CHANNEL }]);
      expect(f.liveAdds).toEqual([{ runId: RUN_ID, due: 10_000 + LIMITS.timeoutMs + GRACE_MS + LEASE_MS }]);
      f.answer(completed);
      await expect(answer).resolves.toBe(completed);
    });

    it('a rebuilt leg silent past its budget plus grace is owed to the next wait', async () => {
      f.alive.add('w-dead');
      const answer = f.answers.recoverOrphan(REF, RUN_ID, true, LIMITS);
      await jest.advanceTimersByTimeAsync(LIMITS.timeoutMs + GRACE_MS);
      await expect(answer).resolves.toEqual(owedAnswerResult(RUN_ID));
      expect(f.replays).toHaveLength(1);
    });
  });

  describe('rebuildIfOrphaned and awaitOwed (SPEC §16)', () => {
    it('looks once per lease and rebuilds the leg when its worker is gone; stops once the wait is answered', async () => {
      f.run = view('running', { owner: 'w-live' });
      const answered = new AbortController();
      f.answers.rebuildIfOrphaned(REF, RUN_ID, answered.signal, f.leg().log);
      await jest.advanceTimersByTimeAsync(LEASE_MS);
      expect(f.replays).toEqual([]);
      f.alive.delete('w-live');
      await jest.advanceTimersByTimeAsync(LEASE_MS);
      expect(f.replays).toHaveLength(1);
      answered.abort();
      await jest.advanceTimersByTimeAsync(LEASE_MS * 3);
      expect(f.replays).toHaveLength(1);
    });

    it('answers as any wait once the owed leg parks, and waiting again while it still runs past the budget', async () => {
      const again = jest.fn(() => Promise.resolve(completed));
      f.run = view('running', { owner: 'w-live' });
      const stillRunning = f.answers.awaitOwed(REF, RUN_ID, LIMITS, again);
      await jest.advanceTimersByTimeAsync(LIMITS.timeoutMs + GRACE_MS + 200);
      await expect(stillRunning).resolves.toEqual(owedAnswerResult(RUN_ID));
      expect(again).not.toHaveBeenCalled();

      const parked = f.answers.awaitOwed(REF, RUN_ID, LIMITS, again);
      f.run = view('waiting', { lastResult: waiting });
      await jest.advanceTimersByTimeAsync(200);
      await expect(parked).resolves.toBe(completed);
    });
  });
});
