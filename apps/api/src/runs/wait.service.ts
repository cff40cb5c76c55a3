import { Inject, Injectable } from '@nestjs/common';
import {
  isEndedStatus,
  INVALID_SESSION_ID_MESSAGE,
  SESSION_ID_PATTERN,
  type CodeModeResult,
  type Limits,
  type SessionRef,
} from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import {
  isStoreUnavailable,
  keyedWaitStep,
  type KeyUsed,
  ParkedRunExpiry,
  retryWhileStoreUnavailable,
  RunIds,
  RunLedger,
  RunOwnership,
  type OwnedRun,
  type Reservation,
  redisFailureLog,
} from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import { checkWaitInput, emptyTelemetry, failedInputResult, hostFailureResult, RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';
import type { Logger } from '@codemode/telemetry';
import { BODY_NOT_JSON_ERROR, bodyRefusalError, type ParsedBody } from '../http/request-context';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import {
  endedRunError,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENT_PENDING_ERROR,
  IDEMPOTENT_POLL_MS,
  INVALID_IDEMPOTENCY_KEY_ERROR,
} from './host-results';
import { CallAnswers } from './answers/call-answers';
import { atReach, reaching, storeFailureOf } from './answers/store-failure-answers';
import { waitingAgain } from './answers/stored-answers';
import { IdleWaitAnswers } from './answers/idle-wait-answers';
import { RESERVATION_TTL_MS, ResumeReservations, type Withdraw } from './resume-reservations';

export const RUN_OTHER_SESSION_ERROR = 'code mode run belongs to a different session.';
export const RUN_BEING_RESUMED_ERROR = 'code mode run is already being resumed.';

/** A run this wait reserved: its owner ('' when released) and the epoch it was parked at. */
type ReservedRun = OwnedRun & { owner: string; epoch: number };
const nothingToWithdraw: Withdraw = () => Promise.resolve();

/** What a wait does, once it tried to reserve the run. */
type WaitPlan =
  | { kind: 'unknown' }
  | { kind: 'refused'; error: string; replaySafe: boolean }
  /** Not parked: executing a leg under a worker that is gone (SPEC §6). */
  | { kind: 'running-orphan'; restartSafe: boolean }
  /** SPEC §16: the answer of the run's leg is owed to this wait; `running`: the leg has not ended yet. */
  | { kind: 'owed'; running: boolean; restartSafe: boolean }
  /** `expired`: past its term, ended by ParkedRunExpiry as the reservation found it. */
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
    private readonly runIds: RunIds,
    private readonly presence: WorkerPresence,
    private readonly ownership: RunOwnership,
    private readonly expiry: ParkedRunExpiry,
    private readonly answers: CallAnswers,
    private readonly reservations: ResumeReservations,
    private readonly idle: IdleWaitAnswers,
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
      // SPEC §17: "store is full/unavailable" only when nothing of the call ran (storeFailureAnswer).
      const failed = storeFailureOf(error, false);
      if (!failed) throw error;
      const admitted = redisFailureLog.admit(failed.cause);
      if (admitted) this.logger.warn({ tenant, sessionId, err: failed.cause, ...admitted }, 'wait answered: Redis unavailable or full');
      return failed.answer;
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
      const { token, reservation, limits } = await this.reservations.reserve(ref, runId, { key, replaces });
      if (!('keyUsed' in reservation)) {
        // A wait that finds the answer owed still running comes back through the key, so the
        // answer it takes is recorded under it (reserve-resume).
        return this.resumeReserved(ref, runId, token, reservation, limits, () => this.resumeKeyed(ref, runId, key));
      }
      const used = reservation.keyUsed;
      const bound = (until ??= Date.now() + limits.timeoutMs * 2 + this.config.replyGraceMs);
      // The first wait with the key may have resumed the run: Redis failing from here on reports no outcome.
      const next = await reaching('sent', () => this.followKey(ref, used, bound));
      if ('answer' in next) return next.answer;
      if ('replaces' in next) replaces = next.replaces;
    }
  }

  /** One look at what a used key's first wait became (keyedWaitStep): its answer, or what to do next. */
  private async followKey(
    ref: SessionRef,
    used: KeyUsed,
    until: number,
  ): Promise<{ answer: CodeModeResult } | { replaces: string } | { again: true }> {
    const { view, legToken, resumeToken } = used.answerEvent
      ? { view: null, legToken: null, resumeToken: null }
      : await this.runs.keyedWait(ref, used.runId);
    const step = keyedWaitStep({
      token: used.token,
      answerEvent: used.answerEvent,
      run: view ? { status: view.status, legToken, resumeToken } : null,
    });
    if (step.kind === 'stale') return { replaces: used.token };
    const unavailable = (): CodeModeResult => failedInputResult(RUN_UNAVAILABLE_MESSAGE, emptyTelemetry(), view?.restartSafe ?? false);
    if (step.kind === 'answer-event') return { answer: (await this.runs.resultAt(ref, step.eventId)) ?? unavailable() };
    if (!view) return { answer: unavailable() };
    if (step.kind === 'answer-run')
      return { answer: this.answers.answerOf({ call: 'wait', restartSafe: view.restartSafe }, view) ?? unavailable() };
    const held = used.heldForMs === null ? null : { token: used.token, forMs: used.heldForMs, owner: view.owner ?? '' };
    if (held && (await this.reservations.abandoned(ref, used.runId, held))) return { again: true };
    if (Date.now() >= until) return { answer: hostFailureResult(IDEMPOTENT_PENDING_ERROR, 'runtime_unavailable', view.restartSafe) };
    await new Promise((resolve) => setTimeout(resolve, IDEMPOTENT_POLL_MS));
    return { again: true };
  }

  /**
   * A wait with nothing to do answers at once (SPEC §18, IdleWaitAnswers); else reserve the run,
   * classify what the reservation found, then answer or route the resume.
   */
  private async resume(ref: SessionRef, runId: string): Promise<CodeModeResult> {
    const atOnce = await this.idle.answerAtOnce(ref, runId);
    if (atOnce) return atOnce;
    const { token, reservation, limits } = await this.reservations.reserve(ref, runId);
    return this.resumeReserved(ref, runId, token, reservation, limits, () => this.resume(ref, runId));
  }

  /**
   * `again`: this wait made anew (with its key, if any), once an owed answer it found running is
   * ready. Redis failing a step that may run, resume or end the run is named as such (reaching):
   * the wait then answers without an outcome (SPEC §17).
   */
  private async resumeReserved(
    ref: SessionRef,
    runId: string,
    token: string,
    reservation: Reservation,
    limits: Limits,
    again: () => Promise<CodeModeResult>,
  ): Promise<CodeModeResult> {
    const plan = await this.classify(ref, runId, reservation);
    switch (plan.kind) {
      case 'unknown':
        return this.refuseUnknown(ref, runId);
      case 'refused':
        return this.refuse(ref, { runId }, plan.error, plan.replaySafe);
      case 'running-orphan':
        return reaching('sent', () => this.answers.recoverOrphan(ref, runId, plan.restartSafe, limits));
      case 'owed':
        // The reservation handed this wait the owed answer (or it is still to come): it exists.
        if (plan.running) return reaching('sent', () => this.answers.awaitOwed(ref, runId, limits, again));
        return reaching('sent', async () => {
          const run = await this.runs.get(ref, runId);
          const answer = this.answers.answerOf({ call: 'wait', restartSafe: plan.restartSafe }, run);
          return answer ?? failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), plan.restartSafe);
        });
      case 'expired':
        return failedInputResult(endedRunError(ref.sessionId, runId), emptyTelemetry(), plan.run.restartSafe);
      case 'lose':
        return reaching('sending', () =>
          this.answers.lose(
            { ref, runId, call: 'wait', restartSafe: false, log: this.logger.child({ ...ref, runId, owner: plan.run.owner }) },
            plan.run.epoch,
            'owner of the parked run is gone and the run is not replay-safe; recorded as lost',
          ),
        );
      case 'held':
      case 'restore':
      case 'replay':
        return this.route(ref, runId, token, plan.run, plan.kind, limits);
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
    // Past snapshotTtlSeconds but not ended yet (its holder is gone, or its timer is late): ended now.
    const { step } = await reaching('sending', () => this.expiry.settle({ ...run, ref, expiresAt: reservation.expiresAt }, 'wait'));
    if (step === 'end') return { kind: 'expired', run };
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
    const leg = { ref, runId, call: 'wait', restartSafe: run.restartSafe, log } as const;
    const deadline = this.answers.follow(
      leg,
      { startMs: limits.timeoutMs, answerMs: limits.timeoutMs },
      {
        onStartOverdue: async () => {
          if (!(await this.runs.giveBackResume(ref, runId, token))) return null;
          const withdraw = await withdrawal;
          await withdraw();
          if (fate === 'held' && (await this.ownership.classify(run, ref)) === 'lose')
            return this.answers.lose(leg, run.epoch, 'owner of the parked run is gone; run recorded as lost');
          // SPEC §3: nothing is lost; the next wait goes to the owner or, once its lease lapsed, to replay.
          log.warn('the wait was not taken within its budget; the run stays parked');
          return waitingAgain(await this.runs.get(ref, runId), run.restartSafe);
        },
        onNoAnswer: () => this.answers.unanswered(leg),
      },
    );
    this.answers.markLive(ref, runId, limits.timeoutMs);
    if (run.restartSafe) this.answers.rebuildIfOrphaned(ref, runId, deadline.signal, log);
    if (fate === 'replay') log.info('owner of the parked replay-safe run is gone; rebuilding it by replay');
    const withdrawal = this.reservations.send(ref, runId, token, fate, run.owner).catch((error: unknown) => {
      deadline.reject(atReach(error, 'sending'));
      // Give the reservation back (once Redis answers again, if that was the failure), so the
      // next wait is not refused as "already being resumed" by a wait that already gave up.
      void retryWhileStoreUnavailable(() => this.runs.giveBackResume(ref, runId, token), { giveUpMs: RESERVATION_TTL_MS }).catch(
        (failure: unknown) => log.warn({ err: failure }, 'could not release the reservation of a failed wait; it lapses by itself'),
      );
      return nothingToWithdraw;
    });
    // Routed: from here on the leg may run, and its outcome exist, even if Redis fails this wait.
    return reaching('sent', () => deadline.outcome);
  }

  /** Unknown here: another session's run, a shell session id given by mistake, or nothing. */
  private async refuseUnknown(ref: SessionRef, runId: string): Promise<CodeModeResult> {
    const input = { runId };
    const [elsewhere, isShell] = await Promise.all([this.elsewhere(ref, runId), this.presence.isShellSession(ref.tenant, runId)]);
    if (elsewhere) return this.refuse(ref, input, RUN_OTHER_SESSION_ERROR, false);
    const error = isShell ? `${RUN_UNAVAILABLE_MESSAGE} ${runId} is a shell process session: use process poll.` : RUN_UNAVAILABLE_MESSAGE;
    return this.refuse(ref, input, error, false);
  }

  /** The run is in another session of this tenant: its id says so, or for an earlier release's id, its `runloc` record. */
  private async elsewhere(ref: SessionRef, runId: string): Promise<boolean> {
    const place = await this.runIds.place(ref, runId);
    if (place !== 'unsigned') return place === 'elsewhere';
    return (await this.runs.locate(ref.tenant, runId)) !== null;
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
