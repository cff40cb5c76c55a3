import { Inject, Injectable } from '@nestjs/common';
import {
  decodeEventData,
  platformSettledData,
  platformToolOutcome,
  settledOutcome,
  type AbortJob,
  type CodeModeResult,
  type ResumeJob,
  type SessionRef,
  type ToolResultsJob,
} from '@codemode/contracts';
import type { RedisClient } from '@codemode/events';
import type { AppConfig } from '@codemode/config';
import {
  EventLog,
  NotAwaitingPlatformError,
  publishAnswer,
  recordPlatformAnswers,
  retryWhileStoreUnavailable,
  RunAlreadyEndedError,
  RunEnds,
  RunLedger,
  StaleEpochError,
} from '@codemode/events';
import { SandboxPool, UnknownBridgeCallError } from '@codemode/sandbox';
import { ABORTED_MESSAGE, failedOutcome, RUN_UNAVAILABLE_MESSAGE, type CellOutcome } from '@codemode/cells';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER, REDIS } from '../core/tokens';
import { LegRunner } from './leg-runner.service';
import { ResidentRuns } from './resident-runs.service';
import { RunningLegs } from './running-legs.service';
import type { WorkerRun } from './worker-run';

/**
 * The jobs a run's owner takes from its own queue, for runs it holds: resume a parked run (its
 * next leg), abort a run (parked or executing), apply platform answers to its pending tool calls.
 */
@Injectable()
export class HeldRunJobs {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly runs: RunLedger,
    private readonly events: EventLog,
    private readonly pool: SandboxPool,
    private readonly resident: ResidentRuns,
    private readonly legs: LegRunner,
    private readonly ends: RunEnds,
    private readonly metrics: WorkerMetrics,
    private readonly running: RunningLegs,
  ) {}

  /** Resumes a run parked here; false when this worker does not hold its VM (recovery's turn). */
  async resume(job: ResumeJob): Promise<boolean> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    // Taken before any await, so a hand-over, expiry or eviction cannot drop the VM under this resume.
    const run = this.resident.take(job.runId);
    if (!run) return false;
    let taken: boolean;
    try {
      // Sent again while Redis does not answer, within the leg's budget: a take that landed but
      // whose answer was lost answers `taken` again (resume-run), so the run is never left
      // `running` in the log while its VM sits parked here.
      const take = { token: job.token, workerId: this.config.workerId, epoch: run.epoch, replyTo: job.replyTo, input: job.input };
      taken = await this.running.beside(
        { ref, runId: job.runId, restartSafe: run.restartSafe, timeoutMs: run.limits.timeoutMs },
        job.replyTo,
        () => retryWhileStoreUnavailable(() => this.runs.resume(ref, job.runId, take), { giveUpMs: run.limits.timeoutMs }),
        (resumed) => resumed,
      );
    } catch (error) {
      // Taken over by another worker: this VM is stale. Otherwise (Redis away) it stays parked.
      if (error instanceof StaleEpochError) this.resident.drop(run);
      else this.giveBack(run);
      throw error;
    }
    if (!taken) {
      log.info('resume not taken: the wait gave up or another took it');
      this.giveBack(run);
      return true;
    }
    this.resident.resumed(run);
    this.metrics.resumed('owner');
    const started = Date.now();
    await this.applyLoggedAnswers(ref, run, log);
    const leg = run.abortRequested ? { kind: 'none' as const, outcome: abortedOutcome() } : { kind: 'resume' as const };
    const result = await this.legs.run(run, leg, job.replyTo, log, started);
    log.info({ status: result.status }, 'wait answered');
    return true;
  }

  /** A resume not taken: the run is parked again, unless an abort discarded its VM meanwhile (the API then ends the run itself). */
  private giveBack(run: WorkerRun): void {
    if (run.abortRequested) this.resident.drop(run);
    else this.resident.giveBack(run);
  }

  /**
   * Platform answers recorded in the log instead of handed here (SPEC §12: this worker did not take
   * them within the API's deadline, or they came while it was restoring the run): applied before
   * the leg, so none is lost. Reads the log, from shortly before the park, only while a platform
   * call is still unanswered.
   */
  private async applyLoggedAnswers(ref: SessionRef, run: WorkerRun, log: Logger): Promise<void> {
    const pending = new Set(this.pool.platformPending(run.runId));
    if (pending.size === 0) return;
    // A restore's leg (at most its budget, plus taking the run over) may have been answered before it parked.
    const since = run.parkedAt - run.limits.timeoutMs - RESTORE_SLACK_MS;
    for (const event of await this.events.runEvents(ref, run.runId, since)) {
      const id = event.data.callId;
      if (event.type !== 'tool.settled' || typeof id !== 'string' || !pending.has(id)) continue;
      const settled = decodeEventData(event.type, event.data);
      const outcome = settled && settledOutcome(settled);
      if (!outcome) continue;
      pending.delete(id);
      this.pool.settle(run.runId, id, outcome);
      log.info({ callId: id }, 'platform answer taken from the log');
    }
  }

  /** Platform answers to pending client tool calls: settled in the VM, recorded, acknowledged. */
  async toolResults(job: ToolResultsJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const parked = this.resident.parked(job.runId);
    const running = this.resident.get(job.runId);
    let answer: { accepted: number } | { error: string };
    if (!parked && running?.residency === 'running' && job.results.every((result) => running.host.awaitsPlatform(result.id))) {
      answer = await this.answerRunning(ref, running, job);
    } else if (!parked) {
      answer = await this.answerNotHeld(ref, job);
    } else {
      try {
        const notPlatform = job.results.find((result) => !this.pool.awaitsPlatform(job.runId, result.id));
        if (notPlatform) throw new UnknownBridgeCallError(job.runId, notPlatform.id);
        for (const result of job.results) {
          // Logged, with its outcome, before the VM sees it: a replay, or a restore from the run's
          // image after this worker is gone (SPEC §12), must find every answer the run was given.
          await this.runs.append(ref, {
            type: 'tool.settled',
            runId: job.runId,
            epoch: parked.epoch,
            data: platformSettledData(result, true),
          });
          this.pool.settle(job.runId, result.id, platformToolOutcome(result));
          // Answered by the platform: counted, but its duration is the platform's, not ours.
          this.metrics.toolCalled('client', result.ok);
        }
        answer = { accepted: job.results.length };
      } catch (error) {
        answer = { error: this.refusal(job, error) };
      }
    }
    await publishAnswer(this.redis, job.replyTo, job.requestId, answer);
  }

  /**
   * SPEC §15: answers to an awaitResults run's `agents.run` calls, which wait in flight (the run
   * never parks): recorded, then handed to its tool host, as a parked run's are to its VM.
   */
  private async answerRunning(ref: SessionRef, run: WorkerRun, job: ToolResultsJob): Promise<{ accepted: number } | { error: string }> {
    try {
      for (const result of job.results) {
        await this.runs.append(ref, {
          type: 'tool.settled',
          runId: job.runId,
          epoch: run.epoch,
          data: platformSettledData(result, run.restartSafe),
        });
        run.host.settlePlatform(result.id, platformToolOutcome(result));
        this.metrics.toolCalled('platform', result.ok);
      }
      return { accepted: job.results.length };
    } catch (error) {
      return { error: this.refusal(job, error) };
    }
  }

  /**
   * Answers for a run this worker no longer holds: one it just handed over or evicted is restored
   * (or rebuilt) by the next wait, which takes them from the log, so they are recorded there.
   */
  private async answerNotHeld(ref: SessionRef, job: ToolResultsJob): Promise<{ accepted: number } | { error: string }> {
    const run = await this.runs.get(ref, job.runId);
    // Released, or being released by this worker right now (its VM already dropped); not a run
    // this worker is taking for a resume (its VM is about to get a leg).
    const handedOver = !run?.owner || (run.owner === this.config.workerId && this.resident.get(job.runId)?.residency !== 'resuming');
    if (run?.status !== 'waiting' || !handedOver) return { error: RUN_UNAVAILABLE_MESSAGE };
    try {
      await recordPlatformAnswers(this.events, ref, run, job.results);
      return { accepted: job.results.length };
    } catch (error) {
      return { error: this.refusal(job, error) };
    }
  }

  /** What the platform is told when its answers are refused: the call it named, never an internal error's text. */
  private refusal(job: ToolResultsJob, error: unknown): string {
    if (error instanceof UnknownBridgeCallError || error instanceof NotAwaitingPlatformError) return error.message;
    this.logger.warn({ runId: job.runId, err: error }, 'tool results not taken');
    return 'the run could not take these tool results now; retry.';
  }

  /** SPEC §3: aborted, pending calls cancelled, slot freed, nothing committed. */
  async abort(job: AbortJob): Promise<void> {
    const { run, discarded } = this.resident.discardVm(job.runId);
    if (run?.residency !== 'parked') {
      // An exec or wait is executing it: its leg ends `aborted` (its VM is gone), and whoever runs
      // the leg records and answers that outcome (the API reads it from the run). A resume taking
      // it ends aborted without running.
      if (run?.residency === 'resuming') run.abortRequested = true;
      else if (!run && !discarded) this.logger.info({ runId: job.runId }, 'abort of a run this worker does not hold; ignored');
      return;
    }
    this.resident.ended(run);
    const result: CodeModeResult = {
      status: 'failed',
      error: ABORTED_MESSAGE,
      code: 'aborted',
      failurePhase: 'host',
      bridgeDispatchStarted: false,
      replaySafe: run.restartSafe,
      telemetry: run.host.telemetry(),
    };
    try {
      await this.ends.finish(run, result, { replyTo: job.replyTo });
    } catch (error) {
      if (!(error instanceof RunAlreadyEndedError)) throw error;
    }
  }
}

/** How long before a restored run's leg the platform may have answered it (taking the run over, reading its log). */
const RESTORE_SLACK_MS = 10_000;

/** A resume whose run was aborted before its leg reached the sandbox. */
function abortedOutcome(): CellOutcome {
  return failedOutcome({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
}
