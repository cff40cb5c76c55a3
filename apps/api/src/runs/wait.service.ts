import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  isEndedStatus,
  INVALID_SESSION_ID_MESSAGE,
  SESSION_ID_PATTERN,
  type CodeModeResult,
  type Limits,
  type RunView,
  type SessionRef,
} from '@codemode/contracts';
import { effectiveLimits, type AppConfig } from '@codemode/config';
import {
  isStoreUnavailable,
  keyedWaitStep,
  LiveRunIndex,
  pastExpiry,
  retryWhileStoreUnavailable,
  RunLedger,
  RunEnds,
  RunOwnership,
  RunReplies,
  SessionLedger,
  type KeyUsed,
  type OwnedRun,
  type Reservation,
  redisFailureLog,
} from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import {
  checkWaitInput,
  emptyTelemetry,
  failedInputResult,
  hostFailureResult,
  owedAnswerResult,
  RUN_UNAVAILABLE_MESSAGE,
} from '@codemode/cells';
import type { Logger } from '@codemode/telemetry';
import { CellQueue } from '../queues/cell-queue';
import { WorkerQueues } from '../queues/worker-queues';
import { BODY_NOT_JSON_ERROR, bodyRefusalError, type ParsedBody } from '../http/request-context';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import {
  endedRunError,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENT_PENDING_ERROR,
  IDEMPOTENT_POLL_MS,
  INVALID_IDEMPOTENCY_KEY_ERROR,
  NO_ANSWER_ERROR,
  waitStoreFailureError,
} from './host-results';
import { ApprovalHold } from '../approvals/approval-hold';
import { oweAnswer } from './owed-answer';
import { ReplyDeadline } from './reply-deadline';

export const RUN_OTHER_SESSION_ERROR = 'code mode run belongs to a different session.';
export const RUN_BEING_RESUMED_ERROR = 'code mode run is already being resumed.';
/** A reservation lapses after this if its API instance vanished (longer than any wait). */
const RESERVATION_TTL_MS = 130_000;
/** A reservation this old with no resume job anywhere was left by a wait that died (see `abandoned`). */
const ABANDONED_RESERVATION_MS = 1000;
/** How often a wait owed a leg's answer looks whether the leg parked or ended (SPEC §16). */
const OWED_POLL_MS = 200;

/** A run this wait reserved: its owner ('' when released) and the epoch it was parked at. */
type ReservedRun = OwnedRun & { owner: string; epoch: number };
type Withdraw = () => Promise<unknown>;
const nothingToWithdraw: Withdraw = () => Promise.resolve();

/** What a wait does, once it tried to reserve the run. */
type WaitPlan =
  | { kind: 'unknown' }
  | { kind: 'refused'; error: string; replaySafe: boolean }
  /** Not parked: executing a leg under a worker that is gone (SPEC §6). */
  | { kind: 'running-orphan'; restartSafe: boolean }
  /** SPEC §16: the answer of the run's leg is owed to this wait; `running`: the leg has not ended yet. */
  | { kind: 'owed'; running: boolean; restartSafe: boolean }
  | { kind: 'expired' | 'lose' | 'held' | 'restore' | 'replay'; run: ReservedRun };

/**
 * `wait` (SPEC §3): checks in SPEC's order (unknown/other tenant → other session → already being
 * resumed), reserves the parked run, and routes the resume to the worker that holds it. A refused
 * wait leaves the run untouched; an owner that does not take the wait within the budget gets the
 * run's `waiting` answer again.
 */
@Injectable()
export class WaitService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly live: LiveRunIndex,
    private readonly sessions: SessionLedger,
    private readonly replies: RunReplies,
    private readonly workers: WorkerQueues,
    private readonly cells: CellQueue,
    private readonly presence: WorkerPresence,
    private readonly ownership: RunOwnership,
    private readonly ends: RunEnds,
    private readonly approvals: ApprovalHold,
  ) {}

  async wait(tenant: string, sessionId: string, body: ParsedBody, idempotencyKey?: string): Promise<CodeModeResult> {
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      return failedInputResult(INVALID_SESSION_ID_MESSAGE, emptyTelemetry(), false);
    }
    const ref: SessionRef = { tenant, sessionId };
    // `large` never reaches wait: its bodies are small-body-route bodies, parsed before the route runs.
    if (body.kind !== 'json')
      return this.refuse(ref, { body: body.kind }, body.kind === 'large' ? BODY_NOT_JSON_ERROR : bodyRefusalError(body), false);
    const check = checkWaitInput(body.value);
    if (!check.ok) return this.refuse(ref, body.value, check.error, false);
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      return this.refuse(ref, body.value, INVALID_IDEMPOTENCY_KEY_ERROR, false);
    }
    try {
      return idempotencyKey === undefined ? await this.resume(ref, check.runId) : await this.resumeKeyed(ref, check.runId, idempotencyKey);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      const admitted = redisFailureLog.admit(error);
      if (admitted) this.logger.warn({ tenant, sessionId, err: error, ...admitted }, 'wait refused: Redis unavailable or full');
      return hostFailureResult(waitStoreFailureError(error, sessionId, check.runId), 'runtime_unavailable', false);
    }
  }

  /**
   * SPEC §2: a wait with an Idempotency-Key. The first with the key reserves the run as any wait
   * and its leg is linked to the key (reserve-resume, resume-run); a repeat answers that leg's
   * answer, waiting while it runs, or waits in the first's place if the first never resumed the
   * run (keyedWaitStep). Bounded like a repeated exec key.
   */
  private async resumeKeyed(ref: SessionRef, runId: string, key: string): Promise<CodeModeResult> {
    let replaces = '';
    let until: number | undefined;
    for (;;) {
      const { token, reservation, limits } = await this.reserve(ref, runId, { key, replaces });
      if (!('keyUsed' in reservation)) return this.resumeReserved(ref, runId, token, reservation, limits);
      const used = reservation.keyUsed;
      until ??= Date.now() + limits.timeoutMs * 2 + this.config.replyGraceMs;
      const { view, legToken, resumeToken } = used.answerEvent
        ? { view: null, legToken: null, resumeToken: null }
        : await this.runs.keyedWait(ref, used.runId);
      const step = keyedWaitStep({
        token: used.token,
        answerEvent: used.answerEvent,
        run: view ? { status: view.status, legToken, resumeToken } : null,
      });
      if (step.kind === 'stale') {
        replaces = used.token;
        continue;
      }
      const unavailable = (): CodeModeResult => failedInputResult(RUN_UNAVAILABLE_MESSAGE, emptyTelemetry(), view?.restartSafe ?? false);
      if (step.kind === 'answer-event') return (await this.runs.resultAt(ref, step.eventId)) ?? unavailable();
      if (!view) return unavailable();
      if (step.kind === 'answer-run') return runAnswer(view, view.restartSafe) ?? unavailable();
      const held = used.heldForMs === null ? null : { token: used.token, forMs: used.heldForMs, owner: view.owner ?? '' };
      if (held && (await this.abandoned(ref, used.runId, held))) continue;
      if (Date.now() >= until) return hostFailureResult(IDEMPOTENT_PENDING_ERROR, 'runtime_unavailable', view.restartSafe);
      await new Promise((resolve) => setTimeout(resolve, IDEMPOTENT_POLL_MS));
    }
  }

  /** Reserve the run, classify what the reservation found, then answer or route the resume. */
  private async resume(ref: SessionRef, runId: string): Promise<CodeModeResult> {
    const { token, reservation, limits } = await this.reserve(ref, runId);
    return this.resumeReserved(ref, runId, token, reservation, limits);
  }

  private async resumeReserved(
    ref: SessionRef,
    runId: string,
    token: string,
    reservation: Reservation,
    limits: Limits,
  ): Promise<CodeModeResult> {
    const plan = await this.classify(ref, runId, reservation);
    switch (plan.kind) {
      case 'unknown':
        return this.refuseUnknown(ref, runId);
      case 'refused':
        return this.refuse(ref, { runId }, plan.error, plan.replaySafe);
      case 'running-orphan':
        return this.recoverRunning(ref, runId, plan.restartSafe, limits);
      case 'owed':
        if (plan.running) return this.awaitOwed(ref, runId, limits);
        return (
          runAnswer(await this.runs.get(ref, runId), plan.restartSafe) ??
          failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), plan.restartSafe)
        );
      case 'expired':
        // Past snapshotTtlSeconds but not ended yet (its holder is gone, or its timer is late).
        await this.ends.expire({ ref, runId, epoch: plan.run.epoch });
        return failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), plan.run.restartSafe);
      case 'lose':
        await this.ends.lose({ ref, runId, epoch: plan.run.epoch });
        this.logger.warn(
          { tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: plan.run.owner },
          'owner of the parked run is gone and the run is not replay-safe; recorded as lost',
        );
        return failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), false);
      case 'held':
      case 'restore':
      case 'replay':
        return this.route(ref, runId, token, plan.run, plan.kind, limits);
    }
  }

  /**
   * Reserves the run for this wait. One round trip: the reservation script answers every refusal
   * case too, and the session's limits are read alongside it (auto-pipelined). A reservation left
   * by a wait that died is released and the reservation tried again.
   */
  private reserve(ref: SessionRef, runId: string): Promise<{ token: string; reservation: Reservation; limits: Limits }>;
  private reserve(
    ref: SessionRef,
    runId: string,
    idempotency: { key: string; replaces: string },
  ): Promise<{ token: string; reservation: Reservation | { reserved: false; keyUsed: KeyUsed }; limits: Limits }>;
  private async reserve(
    ref: SessionRef,
    runId: string,
    idempotency?: { key: string; replaces: string },
  ): Promise<{ token: string; reservation: Reservation | { reserved: false; keyUsed: KeyUsed }; limits: Limits }> {
    for (;;) {
      const token = randomUUID();
      const [reservation, session] = await Promise.all([
        idempotency
          ? this.runs.reserveKeyedResume(ref, runId, token, RESERVATION_TTL_MS, idempotency)
          : this.runs.reserveResume(ref, runId, token, RESERVATION_TTL_MS),
        this.sessions.get(ref),
      ]);
      if (!reservation.reserved && 'held' in reservation && reservation.held && (await this.abandoned(ref, runId, reservation.held)))
        continue;
      return { token, reservation, limits: effectiveLimits(this.config, ref.tenant, session?.codeMode) };
    }
  }

  /** What the reservation found, in SPEC's order; the owner's fate decides a reserved run (RunOwnership). */
  private async classify(ref: SessionRef, runId: string, reservation: Reservation): Promise<WaitPlan> {
    if (!reservation.reserved) {
      if (await this.ownership.runningOrphan({ runId, status: reservation.status, owner: reservation.owner })) {
        return { kind: 'running-orphan', restartSafe: reservation.restartSafe };
      }
      if (reservation.answerOwed) return { kind: 'owed', running: reservation.status === 'running', restartSafe: reservation.restartSafe };
      if (reservation.status === null) return { kind: 'unknown' };
      const error = isEndedStatus(reservation.status) ? endedRunError(ref.sessionId, runId) : RUN_BEING_RESUMED_ERROR;
      return { kind: 'refused', error, replaySafe: reservation.restartSafe };
    }
    const run: ReservedRun = { runId, owner: reservation.owner, epoch: reservation.epoch, restartSafe: reservation.restartSafe };
    if (pastExpiry(reservation.expiresAt)) return { kind: 'expired', run };
    return { kind: await this.ownership.classify(run, ref), run };
  }

  /**
   * Sends the resume to the run's owner (`held`) or to any worker to restore from its image
   * (SPEC §12) or rebuild by replay (SPEC §6: its owner is gone, lease lapsed, released or
   * evicted), and answers with what comes back.
   */
  private async route(
    ref: SessionRef,
    runId: string,
    token: string,
    run: ReservedRun,
    fate: 'held' | 'restore' | 'replay',
    limits: Limits,
  ): Promise<CodeModeResult> {
    const log = this.logger.child({ tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: run.owner });
    const deadline = new ReplyDeadline(limits.timeoutMs, limits.timeoutMs, this.config.replyGraceMs, {
      onStartOverdue: async () => {
        if (!(await this.runs.giveBackResume(ref, runId, token))) return null;
        const withdraw = await withdrawal;
        await withdraw();
        if (fate === 'held' && (await this.ownership.classify(run, ref)) === 'lose') {
          await this.ends.lose({ ref, runId, epoch: run.epoch });
          log.warn('owner of the parked run is gone; run recorded as lost');
          return failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), run.restartSafe);
        }
        // SPEC §3: nothing is lost; the next wait goes to the owner or, once its lease lapsed, to replay.
        log.warn('the wait was not taken within its budget; the run stays parked');
        return waitingAgain(await this.runs.get(ref, runId), run.restartSafe);
      },
      onNoAnswer: () => this.unanswered(ref, runId, run.restartSafe, log),
      heldForApproval: (sinceMs) => this.approvals.holdsRun(ref, runId, sinceMs),
    });
    deadline.listen(this.replies.waitFor(runId, { onStarted: () => deadline.started(), signal: deadline.signal }));
    this.markLive(ref, runId, limits);
    if (run.restartSafe) this.rebuildIfOrphaned(ref, runId, deadline.signal, log);
    if (fate === 'replay') log.info('owner of the parked replay-safe run is gone; rebuilding it by replay');
    const withdrawal = this.send(ref, runId, token, fate, run.owner).catch((error: unknown) => {
      deadline.reject(error);
      // Give the reservation back (once Redis answers again, if that was the failure), so the
      // next wait is not refused as "already being resumed" by a wait that already gave up.
      void retryWhileStoreUnavailable(() => this.runs.giveBackResume(ref, runId, token), { giveUpMs: RESERVATION_TTL_MS }).catch(
        (failure: unknown) => log.warn({ err: failure }, 'could not release the reservation of a failed wait; it lapses by itself'),
      );
      return nothingToWithdraw;
    });
    return deadline.outcome;
  }

  /** The leg this wait sets going is ended by a worker's sweep if nobody else ends it (ExecService.markLive). */
  private markLive(ref: SessionRef, runId: string, limits: Limits): void {
    const due = Date.now() + limits.timeoutMs + this.config.replyGraceMs + this.config.presenceTtlMs;
    this.live.add(ref, runId, due).catch(() => undefined);
  }

  /** Queues the resume job; answers how to take it back if nobody takes it in time. */
  private async send(ref: SessionRef, runId: string, token: string, fate: 'held' | 'restore' | 'replay', owner: string): Promise<Withdraw> {
    const requestedAt = Date.now();
    const replyTo = this.replies.channelFor(ref);
    const input = { runId };
    // A restore and a replay are the same job: the worker taking it restores the image when it can.
    if (fate !== 'held') {
      const jobId = await this.cells.replay({
        tenant: ref.tenant,
        sessionId: ref.sessionId,
        runId,
        replyTo,
        resume: { token, input },
        requestedAt,
      });
      return () => this.cells.withdraw(ref, jobId);
    }
    const jobId = await this.workers.resume(owner, {
      tenant: ref.tenant,
      sessionId: ref.sessionId,
      runId,
      token,
      replyTo,
      input,
      requestedAt,
    });
    return () => this.workers.withdraw(owner, jobId);
  }

  /**
   * SPEC §6: the run was executing (a wait's leg) when its worker died, and that worker's lease
   * has lapsed, so nothing will ever answer for it. A replay-safe run is rebuilt on any worker and
   * this wait gets the answer of the leg it continues; any other run is recorded lost.
   */
  private async recoverRunning(ref: SessionRef, runId: string, restartSafe: boolean, limits: Limits): Promise<CodeModeResult> {
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
    const lastAnswer = (): Promise<CodeModeResult> => this.unanswered(ref, runId, true, log);
    // The rebuild publishes no `started`: one deadline, the leg's budget plus the grace.
    const deadline = new ReplyDeadline(limits.timeoutMs + this.config.replyGraceMs, limits.timeoutMs, this.config.replyGraceMs, {
      onStartOverdue: lastAnswer,
      onNoAnswer: lastAnswer,
    });
    deadline.listen(this.replies.waitFor(runId, { onStarted: () => deadline.started(), signal: deadline.signal }));
    this.markLive(ref, runId, limits);
    this.rebuild(ref, runId).catch((error: unknown) => deadline.reject(error));
    return deadline.outcome;
  }

  /**
   * SPEC §16: has a replay-safe run whose leg's worker is gone rebuilt by replay on any worker
   * (RunRecovery takes it over, fenced by owner and epoch, so a second job for it does nothing).
   * Its answer comes to this API's reply channel, where the waits in flight for it listen.
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
   * SPEC §16 "at once": while this wait is in flight on a replay-safe run, looks once per lease
   * whether the leg's worker is gone (RunOwnership) and has it rebuilt then, rather than when the
   * wait's budget ends. Stops when the wait is answered.
   */
  private rebuildIfOrphaned(ref: SessionRef, runId: string, answered: AbortSignal, log: Logger): void {
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
   * The leg did not answer within its budget plus the grace and the run shows no answer of its
   * own (RunOwnership.unansweredFate decides): a replay-safe leg still running owes its answer to
   * the next wait (rebuilt first if its worker is gone); any other answers `runtime_unavailable`,
   * and is lost when its worker is gone.
   */
  private async unanswered(ref: SessionRef, runId: string, restartSafe: boolean, log: Logger): Promise<CodeModeResult> {
    const now = await this.runs.get(ref, runId);
    const known = runAnswer(now, restartSafe);
    if (known) return known;
    const fate = await this.ownership.unansweredFate(now);
    if (fate === 'rebuild') await this.rebuild(ref, runId);
    if (fate === 'rebuild' || fate === 'owe') {
      log.warn({ fate }, 'the replay-safe leg did not answer within the wait budget; answering waiting, its outcome goes to the next wait');
      return oweAnswer(this.runs, ref, runId, (run) => runAnswer(run, restartSafe));
    }
    log.error('the owner did not answer the wait within its budget');
    if (now && fate === 'lose') await this.ends.lose({ ref, runId, epoch: now.epoch });
    return hostFailureResult(NO_ANSWER_ERROR, 'runtime_unavailable', restartSafe);
  }

  /**
   * SPEC §16: this wait is owed the answer of a leg still running (an earlier call answered
   * `waiting` while it was rebuilt). Waits for it to park or end within the wait's budget plus the
   * grace, then answers as any wait would (the reservation hands over the owed answer, or
   * rebuilds a leg whose worker died); still running: `waiting` again, the answer still owed.
   */
  private async awaitOwed(ref: SessionRef, runId: string, limits: Limits): Promise<CodeModeResult> {
    const until = Date.now() + limits.timeoutMs + this.config.replyGraceMs;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, OWED_POLL_MS));
      const now = await this.runs.get(ref, runId);
      const running = now?.status === 'running' && !(await this.ownership.runningOrphan(now));
      if (!running) return this.resume(ref, runId);
      if (Date.now() >= until) return owedAnswerResult(runId);
    }
  }

  /**
   * A reservation whose wait died with its API instance before it routed the resume (or whose
   * resume job failed): older than a moment and with no job for its token in any queue. It is
   * released, so this wait can go on instead of waiting for the reservation to lapse.
   */
  private async abandoned(ref: SessionRef, runId: string, held: { token: string; forMs: number; owner: string }): Promise<boolean> {
    if (held.forMs < ABANDONED_RESERVATION_MS) return false;
    const [ownerJob, replayJob] = await Promise.all([
      held.owner ? this.workers.hasResumeJob(held.owner, held.token) : Promise.resolve(false),
      this.cells.hasReplayJob(ref, held.token),
    ]);
    if (ownerJob || replayJob) return false;
    const released = await this.runs.giveBackResume(ref, runId, held.token);
    if (released)
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, runId, heldForMs: held.forMs },
        'released a wait reservation whose resume was never routed',
      );
    return released;
  }

  /** Unknown here: another session's run, a shell session id given by mistake, or nothing. */
  private async refuseUnknown(ref: SessionRef, runId: string): Promise<CodeModeResult> {
    const input = { runId };
    const [home, isShell] = await Promise.all([this.runs.locate(ref.tenant, runId), this.presence.isShellSession(ref.tenant, runId)]);
    if (home !== null) return this.refuse(ref, input, RUN_OTHER_SESSION_ERROR, false);
    const error = isShell ? `${RUN_UNAVAILABLE_MESSAGE} ${runId} is a shell process session: use process poll.` : RUN_UNAVAILABLE_MESSAGE;
    return this.refuse(ref, input, error, false);
  }

  /** Refusals are recorded for the transcript but leave the run itself untouched. */
  private async refuse(ref: SessionRef, input: unknown, error: string, replaySafe: boolean): Promise<CodeModeResult> {
    const result = failedInputResult(error, emptyTelemetry(), replaySafe);
    try {
      await this.runs.reject(ref, 'wait', input, result);
    } catch (failure) {
      if (!isStoreUnavailable(failure)) throw failure;
    }
    return result;
  }
}

/**
 * What a wait whose pushed answer never came can still answer from the run: its result once it
 * ended or parked again; a run that ended without a result of its own (lost, expired: the last
 * one is the old `waiting`) is unavailable. Undefined while it is still running.
 */
function runAnswer(run: RunView | null, replaySafe: boolean): CodeModeResult | undefined {
  if (!run?.lastResult) return undefined;
  if (run.status === 'waiting') return run.lastResult;
  if (!isEndedStatus(run.status)) return undefined;
  return run.lastResult.status === 'waiting'
    ? failedInputResult(endedRunError(run.sessionId, run.runId), emptyTelemetry(), replaySafe)
    : run.lastResult;
}

/** The run's last `waiting` answer again, without the output it already returned. */
function waitingAgain(run: RunView | null, replaySafe: boolean): CodeModeResult {
  const last = run?.lastResult;
  if (last?.status !== 'waiting') {
    const error = run && isEndedStatus(run.status) ? endedRunError(run.sessionId, run.runId) : RUN_UNAVAILABLE_MESSAGE;
    return failedInputResult(error, emptyTelemetry(), replaySafe);
  }
  const { output: _returned, ...rest } = last;
  return rest;
}
