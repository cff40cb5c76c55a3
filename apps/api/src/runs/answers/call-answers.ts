import { Inject, Injectable } from '@nestjs/common';
import type { CodeModeResult, Limits, RunView, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { ErrorGate, LiveRunIndex, RunEnds, RunLedger, RunOwnership, RunReplies } from '@codemode/events';
import { emptyTelemetry, failedInputResult, hostFailureResult, owedAnswerResult } from '@codemode/cells';
import { ApiMetrics, type Logger } from '@codemode/telemetry';
import { CellQueue } from '../../queues/cell-queue';
import { APP_CONFIG, LOGGER } from '../../core/tokens';
import { ApprovalHold } from '../../approvals/approval-hold';
import { endedRunError, NO_ANSWER_ERROR } from '../host-results';
import { ReplyDeadline } from './reply-deadline';
import { answerAfterGap, storedAnswer, waitAnswerOf } from './stored-answers';

/** How often a wait owed a leg's answer looks whether the leg parked or ended (SPEC §16). */
const OWED_POLL_MS = 200;

const OWED_LINE = 'the replay-safe leg did not answer within its budget; answering waiting, its outcome goes to the next wait';
const UNANSWERED_LINE = 'the worker running the leg did not answer within its budget';

/** What a call does when its leg starts late (null: keep waiting) or does not answer in time. */
export type DeadlineHandlers = ConstructorParameters<typeof ReplyDeadline>[3];

/** A leg an `exec` or a `wait` set going, as its call knows it. */
export interface CallLeg {
  ref: SessionRef;
  runId: string;
  /** The call: an exec's leg is a cell job (its queue re-delivers it when its worker dies); a wait's is a resume or replay job. */
  call: 'exec' | 'wait';
  restartSafe: boolean;
  /** SPEC §3: an `awaitResults` exec never answers `waiting`, so its leg's answer is never owed. */
  awaitResults?: boolean;
  log: Logger;
}

/**
 * The API's answers to `exec` and `wait`, in one place: the deadline a call waits for its leg's
 * pushed answer under, the final-answer rule (storedAnswer), the live-run index entry that has a
 * worker end a leg nobody answered, and what a call does with a leg that did not answer: owe its
 * answer to the next wait (SPEC §16), rebuild it, or lose it. Which of those happens is decided
 * by RunOwnership; this module carries the decision out. The services keep the request logic.
 */
@Injectable()
export class CallAnswers {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly live: LiveRunIndex,
    private readonly replies: RunReplies,
    private readonly cells: CellQueue,
    private readonly ownership: RunOwnership,
    private readonly ends: RunEnds,
    private readonly approvals: ApprovalHold,
    private readonly metrics: ApiMetrics,
  ) {}

  /**
   * A Redis failover or a dead worker leaves every leg in flight unanswered at once: one line a
   * second per kind, with how many were held back since the last, not one per leg (SPEC §13: no
   * log storm); `codemode_unanswered_legs_total{fate}` counts every one.
   */
  private readonly unansweredLog = new ErrorGate(1_000);

  /**
   * Indexes the leg as live: if nobody ends it (this API dies, or cannot close it while Redis is
   * away), a worker's sweep does, a lease after its answer was due (LiveRunSweeper). Best effort:
   * a leg the index misses is still ended by this API.
   */
  markLive(ref: SessionRef, runId: string, answerBudgetMs: number): void {
    const due = Date.now() + answerBudgetMs + this.config.replyGraceMs + this.config.presenceTtlMs;
    this.live.add(ref, runId, due).catch(() => undefined);
  }

  /**
   * Waits for the leg's pushed answer: it must start within `startBudgetMs`, then answer within
   * `answerBudgetMs` plus the reply grace; a leg held for an approval (SPEC §11) is given its
   * budget again. Listens before the caller queues the leg's job, so no answer is missed.
   */
  follow(leg: CallLeg, budget: { startMs: number; answerMs: number }, handlers: DeadlineHandlers): ReplyDeadline {
    const { ref, runId } = leg;
    const deadline = new ReplyDeadline(budget.startMs, budget.answerMs, this.config.replyGraceMs, {
      heldForApproval: (sinceMs) => this.approvals.holdsRun(ref, runId, sinceMs),
      ...handlers,
    });
    // A reply lost while the subscriptions moved (a failover) is read from the run once they are
    // back, not at the deadline; a read that fails (Redis still away) leaves it to the deadline.
    const onGap = () =>
      void this.runs.get(ref, runId).then(
        (run) => {
          const answer = answerAfterGap(leg, run);
          if (answer) deadline.resolve(answer);
        },
        () => undefined,
      );
    deadline.listen(this.replies.waitFor(runId, { onStarted: () => deadline.started(), onGap, signal: deadline.signal }));
    return deadline;
  }

  /** The answer a call whose pushed answer never came reads from its run (storedAnswer; a wait's: waitAnswerOf). */
  answerOf(leg: Pick<CallLeg, 'call' | 'restartSafe'>, run: RunView | null): CodeModeResult | undefined {
    return leg.call === 'exec' ? storedAnswer(run) : waitAnswerOf(run, leg.restartSafe);
  }

  /**
   * The leg did not answer within its budget plus the grace. The run's own answer wins; else
   * RunOwnership.unansweredFate decides: a replay-safe leg still running owes its answer to the
   * next wait (a wait's leg whose worker is gone is rebuilt first; an exec's cell job is
   * re-delivered by its queue, RunRecovery.recoverStalled); any other answers
   * `runtime_unavailable`, and is lost when its worker is gone.
   */
  async unanswered(leg: CallLeg): Promise<CodeModeResult> {
    const { ref, runId, log } = leg;
    const run = await this.runs.get(ref, runId);
    const known = this.answerOf(leg, run);
    if (known) return known;
    const fate = await this.ownership.unansweredFate(run);
    this.metrics.unanswered(fate);
    if (!leg.awaitResults && (fate === 'rebuild' || fate === 'owe')) {
      if (fate === 'rebuild' && leg.call === 'wait') await this.rebuild(ref, runId);
      const admitted = this.unansweredLog.admit(OWED_LINE);
      if (admitted) log.warn({ fate, ...admitted }, OWED_LINE);
      return this.owe(leg);
    }
    const admitted = this.unansweredLog.admit(UNANSWERED_LINE);
    if (admitted) log.error({ fate, ...admitted }, UNANSWERED_LINE);
    // Its worker may be gone: then the run ends here, so it has its one terminal event.
    if (run && fate === 'lose') await this.ends.lose({ ref, runId, epoch: run.epoch });
    return hostFailureResult(NO_ANSWER_ERROR, 'runtime_unavailable', leg.restartSafe);
  }

  /** The run's owner is gone and nothing can answer for it (RunOwnership: `lose`): recorded lost, fenced by `epoch`; the call answers that it ended. */
  async lose(leg: CallLeg, epoch: number, why: string): Promise<CodeModeResult> {
    await this.ends.lose({ ref: leg.ref, runId: leg.runId, epoch });
    leg.log.warn(why);
    return failedInputResult(endedRunError(leg.ref.sessionId, leg.runId), emptyTelemetry(), leg.restartSafe);
  }

  /**
   * SPEC §6: a wait found the run executing a leg whose worker is gone (RunOwnership.runningOrphan),
   * so nothing will ever answer for it. A replay-safe run is rebuilt on any worker and the wait
   * gets the answer of the leg it continues; any other run is recorded lost.
   */
  async recoverOrphan(ref: SessionRef, runId: string, restartSafe: boolean, limits: Limits): Promise<CodeModeResult> {
    const log = this.logger.child({ tenant: ref.tenant, sessionId: ref.sessionId, runId });
    if (!restartSafe) {
      const run = await this.runs.get(ref, runId);
      if (run?.status === 'running') {
        await this.ends.lose({ ref, runId, epoch: run.epoch });
        log.warn('the worker running this run died; recorded as lost');
      }
      return failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), false);
    }
    log.warn('the worker running this replay-safe run died; rebuilding it by replay');
    const lastAnswer = (): Promise<CodeModeResult> => this.unanswered({ ref, runId, call: 'wait', restartSafe: true, log });
    // The rebuild publishes no `started`: one deadline, the leg's budget plus the grace.
    const deadline = this.follow(
      { ref, runId, call: 'wait', restartSafe: true, log },
      { startMs: limits.timeoutMs + this.config.replyGraceMs, answerMs: limits.timeoutMs },
      { onStartOverdue: lastAnswer, onNoAnswer: lastAnswer, heldForApproval: undefined },
    );
    this.markLive(ref, runId, limits.timeoutMs);
    this.rebuild(ref, runId).catch((error: unknown) => deadline.reject(error));
    return deadline.outcome;
  }

  /**
   * SPEC §16 "at once": while a wait is in flight on a replay-safe run, looks once per lease
   * whether the leg's worker is gone (RunOwnership) and has it rebuilt then, rather than when the
   * wait's budget ends. Stops when the wait is answered.
   */
  rebuildIfOrphaned(ref: SessionRef, runId: string, answered: AbortSignal, log: Logger): void {
    let looking = false;
    const timer = setInterval(() => {
      if (looking) return;
      looking = true;
      this.runs
        .get(ref, runId)
        .then(async (now) => {
          if (answered.aborted || !(await this.ownership.orphanToRebuild(now))) return;
          log.warn({ owner: now?.owner }, 'the worker running this replay-safe leg is gone; rebuilding it by replay');
          await this.rebuild(ref, runId);
        })
        .catch((error: unknown) =>
          log.warn({ err: error }, 'could not look at the owner of a replay-safe leg; the wait budget still bounds it'),
        )
        .finally(() => (looking = false));
    }, this.config.presenceTtlMs);
    timer.unref();
    answered.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  /**
   * SPEC §16: a wait is owed the answer of a leg still running (an earlier call answered
   * `waiting` while it was rebuilt). Waits for it to park or end within the wait's budget plus the
   * grace, then answers as any wait would (`again`: the reservation hands over the owed answer, or
   * rebuilds a leg whose worker died); still running: `waiting` again, the answer still owed.
   */
  async awaitOwed(ref: SessionRef, runId: string, limits: Limits, again: () => Promise<CodeModeResult>): Promise<CodeModeResult> {
    const until = Date.now() + limits.timeoutMs + this.config.replyGraceMs;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, OWED_POLL_MS));
      const now = await this.runs.get(ref, runId);
      const running = now?.status === 'running' && !(await this.ownership.runningOrphan(now));
      if (!running) return again();
      if (Date.now() >= until) return owedAnswerResult(runId);
    }
  }

  /**
   * SPEC §16: has a replay-safe run whose leg's worker is gone rebuilt by replay on any worker
   * (RunRecovery takes it over, fenced by owner and epoch, so a second job for it does nothing).
   * Its answer comes to this API's reply channel, where the calls in flight for it listen.
   */
  private async rebuild(ref: SessionRef, runId: string): Promise<void> {
    await this.cells.replay({
      tenant: ref.tenant,
      sessionId: ref.sessionId,
      runId,
      replyTo: this.replies.channelFor(ref),
      requestedAt: Date.now(),
    });
  }

  /**
   * The leg still runs: its answer is owed to the next `wait` and the call answers `waiting` with
   * the runId; a leg that parked or ended meanwhile is answered from the run.
   */
  private async owe(leg: CallLeg): Promise<CodeModeResult> {
    if (await this.runs.oweAnswer(leg.ref, leg.runId)) return owedAnswerResult(leg.runId);
    return this.answerOf(leg, await this.runs.get(leg.ref, leg.runId)) ?? hostFailureResult(NO_ANSWER_ERROR, 'runtime_unavailable', true);
  }
}
