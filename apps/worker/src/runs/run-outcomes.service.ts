import { Inject, Injectable } from '@nestjs/common';
import type { CodeModeResult, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import {
  isStoreUnavailable,
  LiveRunIndex,
  ParkedRunIndex,
  parkingTerm,
  resultReply,
  retryWhileStoreUnavailable,
  RUN_HISTORY_LIMIT_MESSAGE,
  RunAlreadyEndedError,
  RunEnds,
  RunHistoryLimitError,
  RunLedger,
  RunNotStartedError,
  storeStopMessage,
  toStoreError,
  TrailNotLandedError,
  redisFailureLog,
} from '@codemode/events';
import {
  buildCellResult,
  buildWaitingResult,
  failedOutcome,
  hostFailureResult,
  type CellOutcome,
  type TerminalCellOutcome,
} from '@codemode/cells';
import { ResultsStore, SessionStore, StoreCapacityError } from '@codemode/store';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { ParkedImages } from './parked-images.service';
import { ResidentRuns } from './resident-runs.service';
import type { WorkerRun } from './worker-run';
import type { RunToolHost } from '../tools/run-tool-host';
import { EVENTS_UNRECORDED_MESSAGE } from '../tools/run-event-writer';

/** Why a claimed run failed before it ran (`RunOutcomes.failUnprepared`). */
const UNPREPARED_MESSAGE =
  "code mode could not read the session's tools or policy to run the cell; the failure was logged. Retry the exec.";

/** What a run that reached its history cap ends with, whatever its cell did (SPEC §6). */
function historyLimitOutcome(outcome: CellOutcome): TerminalCellOutcome {
  return failedOutcome({ code: 'internal_error', phase: 'host', error: RUN_HISTORY_LIMIT_MESSAGE }, outcome);
}

/**
 * What a run its host stopped ends with, whatever its cell did: the history cap, a Redis failure
 * of a host call, or a read's events that could not be written.
 */
function stoppedOutcome(host: RunToolHost, outcome: CellOutcome): CellOutcome {
  if (host.historyFull) return historyLimitOutcome(outcome);
  if (host.eventsUnrecorded) return failedOutcome({ code: 'internal_error', phase: 'host', error: EVENTS_UNRECORDED_MESSAGE }, outcome);
  const storeFailure = host.storeFailure;
  return storeFailure === null ? outcome : failedOutcome({ code: 'runtime_unavailable', phase: 'host', error: storeFailure }, outcome);
}

/** A write of the run (its calls' events, a host call) stopped it: `stoppedOutcome` fails its leg, whatever its cell did. */
function stoppedOnWrites(host: RunToolHost): boolean {
  return host.historyFull || host.eventsUnrecorded || host.storeFailure !== null;
}

/** The leg ends the run and writes nothing else first (no park, no store commit): its end may go behind its reads' events. */
function endsAlone(run: WorkerRun, outcome: CellOutcome): boolean {
  if (outcome.status === 'waiting') return false;
  return outcome.status !== 'completed' || run.host.storeWrites().size === 0;
}

/** A cell that would have parked past its tenant's quota: it fails, and the run ends (SPEC §10). */
function parkedQuotaOutcome(outcome: CellOutcome, error: string): TerminalCellOutcome {
  return failedOutcome({ code: 'runtime_unavailable', phase: 'host', error }, outcome);
}

/**
 * SPEC §13: a new cell that nothing claimed yet is claimed before it writes anything but its end
 * (its park, a saved value): nothing of a cell whose claim is declined is seen anywhere.
 * @throws RunNotStartedError when its claim was declined
 */
async function claimedBeforeWrite(run: WorkerRun): Promise<void> {
  const answer = await run.claimGate?.claimed();
  if (answer && !answer.started) throw new RunNotStartedError(run.runId, answer.status);
}

/**
 * A park sent again after an attempt whose reply was lost (Redis went away as it answered) finds
 * the run moved on when that attempt landed: a wait took it (only a recorded park can be taken) and
 * its next leg runs, or it left this worker (expired, aborted). That park is recorded: written
 * again it would put a second `run.parked` in the log and publish the earlier leg's answer to the
 * wait in flight, and parked again here it would put the next leg's VM back among the parked ones.
 * Asked after every await up to the park's send, after any take in flight settled
 * (`untilTakeSettled`): a take made later sends its resume behind the park on the session's
 * connection, so the park lands first and is answered as a repeat (but for a resend the client
 * delays, after a failover or a script load).
 */
function parkRecordedSince(run: WorkerRun, leg: number): boolean {
  return run.leg !== leg || (run.residency !== 'running' && run.residency !== 'parked');
}

/** How often a park sent again looks whether a take in flight settled. */
const TAKE_SETTLED_POLL_MS = 10;

/**
 * A take in flight (`resuming`) decides what a park sent again is: taken, the park had landed and
 * the next leg runs; given back (a stale resume, or one the run refused), it is parked here again
 * and the park still to be written.
 */
async function untilTakeSettled(run: WorkerRun): Promise<void> {
  while (run.residency === 'resuming') await new Promise((resolve) => setTimeout(resolve, TAKE_SETTLED_POLL_MS));
}

/** Logged (at most once a second) each time a run's outcome could not be recorded yet. */
const RECORD_RETRY_LINE = 'Redis unavailable or full; recording the run outcome again';
/** How long a run outcome is retried while Redis is unreachable. */
const RECORD_RETRY_MS = 10 * 60_000;

const ALWAYS_REPLAY_REASON = 'CODEMODE_ALWAYS_REPLAY: every wait rebuilds the run by replay';

/**
 * Records a leg's outcome in the log and pushes the answer: a terminal event for completed and
 * failed cells (through RunEnds), `run.parked` for waiting ones (which then stay parked on this
 * worker: ResidentRuns).
 */
@Injectable()
export class RunOutcomes {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly resident: ResidentRuns,
    private readonly ends: RunEnds,
    private readonly sessionStore: SessionStore,
    private readonly results: ResultsStore,
    private readonly metrics: WorkerMetrics,
    private readonly parkedIndex: ParkedRunIndex,
    private readonly live: LiveRunIndex,
    private readonly limits: WorkerTenantLimits,
    private readonly images: ParkedImages,
  ) {}

  /** `legStartedAt`: when this exec or wait leg started (epoch ms), for `codemode_run_duration_seconds`. */
  async record(run: WorkerRun, outcome: CellOutcome, replyTo: string, legStartedAt: number): Promise<CodeModeResult> {
    // What earlier legs returned: every attempt of this leg's write counts its output from here.
    const prior = run.priorOutputBytes;
    const leg = run.leg;
    // A read's events may still be on their way (RunEventWriter.trail): the park or end comes after
    // them; an end that writes nothing else goes right behind them, written only if they landed.
    let trailMark = endsAlone(run, outcome) ? run.host.sendMarkedTrail() : undefined;
    const writeLeg = async (mark?: string): Promise<CodeModeResult> => {
      try {
        return await this.write(run, leg, prior, stoppedOutcome(run.host, outcome), replyTo, mark);
      } catch (error) {
        // SPEC §6: the run reached its history cap while being recorded (parking it, committing
        // its store): it fails with the cap's error, which is always recorded. A VM its refused
        // park left here goes, and so does its image (with the run's end).
        if (!(error instanceof RunHistoryLimitError)) throw error;
        this.resident.dropUnrecorded(run);
        return this.write(run, leg, prior, historyLimitOutcome(outcome), replyTo);
      }
    };
    const result = await this.untilRecorded(run, async () => {
      const mark = trailMark;
      trailMark = undefined;
      if (mark === undefined) {
        await run.host.landed();
        return writeLeg();
      }
      try {
        return await writeLeg(mark);
      } catch (error) {
        if (!(error instanceof TrailNotLandedError)) throw error;
        // They did not all land: the end is written as they decide (the cap, a store failure).
        await run.host.landed();
        return writeLeg();
      }
    }).catch((error: unknown) => {
      this.resident.dropUnrecorded(run);
      throw error;
    });
    this.metrics.runAnswered(result, legStartedAt);
    return result;
  }

  /**
   * A run this worker claimed whose tools could not be prepared (its stored tools or policies could
   * not be read): it fails without running, with its one terminal event and the caller's answer.
   */
  async failUnprepared(
    run: { ref: SessionRef; runId: string; epoch: number; restartSafe: boolean },
    replyTo: string,
    cause: unknown,
  ): Promise<CodeModeResult> {
    // Redis not answering (or full) is an outage, in the store's words; anything else is a bug.
    const result = isStoreUnavailable(cause)
      ? hostFailureResult(storeStopMessage(toStoreError(cause)), 'runtime_unavailable', run.restartSafe)
      : hostFailureResult(UNPREPARED_MESSAGE, 'internal_error', run.restartSafe);
    const recorded = await this.untilRecorded(run, async () => {
      await this.ends.finish(run, result, { replyTo });
      return result;
    });
    this.metrics.runAnswered(recorded, Date.now());
    return recorded;
  }

  /**
   * SPEC §6, nothing acknowledged is lost: an outcome that could not be written because Redis was
   * unreachable is written again once it answers (the exec or wait may have been answered
   * `runtime_unavailable` meanwhile; the run still gets its one terminal event). A retry that
   * finds the run already ended (the first write landed, its reply did not) answers what it holds.
   */
  private untilRecorded(run: { ref: SessionRef; runId: string }, write: () => Promise<CodeModeResult>): Promise<CodeModeResult> {
    const fields = { tenant: run.ref.tenant, sessionId: run.ref.sessionId, runId: run.runId };
    return retryWhileStoreUnavailable(
      async (attempt) => {
        try {
          return await write();
        } catch (error) {
          if (attempt === 1 || !(error instanceof RunAlreadyEndedError)) throw error;
          const now = await this.runs.get(run.ref, run.runId);
          if (!now?.lastResult) throw error;
          return now.lastResult;
        }
      },
      {
        giveUpMs: RECORD_RETRY_MS,
        onRetry: (attempt, retryInMs) => {
          const admitted = redisFailureLog.admit(RECORD_RETRY_LINE);
          if (admitted) this.logger.warn({ ...fields, attempt, retryInMs, ...admitted }, RECORD_RETRY_LINE);
        },
      },
    );
  }

  /**
   * `leg`: the run's leg this outcome is of; `prior`: the output bytes returned by the run's earlier
   * legs; `trailMark`: the end's fence (`record`).
   */
  private async write(
    run: WorkerRun,
    leg: number,
    prior: number,
    outcome: CellOutcome,
    replyTo: string,
    trailMark?: string,
  ): Promise<CodeModeResult> {
    if (outcome.status === 'waiting') {
      await claimedBeforeWrite(run);
      const { result, outputBytes } = buildWaitingResult({
        runId: run.runId,
        reason: outcome.reason,
        pending: outcome.pending,
        output: outcome.output,
        limits: run.limits,
        restartSafe: run.restartSafe,
        telemetry: run.host.telemetry(),
        priorOutputBytes: prior,
      });
      await untilTakeSettled(run);
      if (parkRecordedSince(run, leg)) return result;
      // Every copy of the park (quota place, image, run.parked, index, the holder's timer) carries this one term.
      const { parkedAt, expiresAt } = parkingTerm(run.limits.snapshotTtlSeconds);
      // SPEC §10: past its tenant's parked-run quota (runs or bytes) the cell fails instead of
      // parking. Its VM is in this worker's memory: it counts its wasm memory, not its image.
      const admission = await this.limits.admitParked(run.ref, run.runId, expiresAt, outcome.memoryBytes);
      await untilTakeSettled(run);
      if (parkRecordedSince(run, leg)) return result;
      if (!admission.admitted) {
        this.resident.discardVm(run.runId);
        run.holdsParkedQuota = false;
        const error = this.limits.parkedRefusal(run.ref.tenant, admission);
        return this.write(run, leg, prior, parkedQuotaOutcome(outcome, error), replyTo);
      }
      run.holdsParkedQuota = true;
      run.priorOutputBytes = prior + outputBytes;
      run.parkedAt = parkedAt;
      run.expiresAt = expiresAt;
      // SPEC §12: the image is in Redis with the park, before it is acknowledged, so any worker can resume the run.
      // CODEMODE_ALWAYS_REPLAY: a replay-safe run is always rebuilt by replay, so it gets no image.
      const image = this.config.alwaysReplay && run.restartSafe ? null : this.images.capture(run, outcome);
      run.imageBytes = outcome.snapshotBytes;
      this.resident.park(run);
      // Best effort: lets any worker expire the run if its holder goes away (ParkedRunSweeper). Sent
      // ahead of the park, not awaited before it: a crash between the two leaves an entry for a run
      // not parked, which the sweep forgets at its term, never a parked run nobody would expire.
      const indexed = this.parkedIndex
        .add(run.ref, run.runId, expiresAt)
        .catch((error: unknown) => this.logger.warn({ runId: run.runId, err: error }, 'could not index the parked run for expiry'));
      const parking = this.runs.park(run.ref, {
        runId: run.runId,
        epoch: run.epoch,
        image,
        data: {
          result,
          expiresAt: new Date(expiresAt).toISOString(),
          snapshotBytes: outcome.snapshotBytes,
          ...(outcome.journal ? { journal: outcome.journal } : {}),
        },
        publish: resultReply(replyTo, run.runId, result),
      });
      // SPEC §13: a first leg's stream entry is acknowledged in the park's socket write (EntryAck).
      run.entryAck?.beside();
      await parking;
      // Only now may its VM leave memory for its image (eviction, ResidentRuns): the image is in Redis.
      run.imaged = image !== null;
      // Parked: no sweep needs to look at the run as live any more (best effort; the sweep forgets what stays).
      this.live.remove(run.ref, run.runId).catch(() => undefined);
      await indexed;
      if (this.config.alwaysReplay && run.restartSafe) await this.resident.handOver(run, ALWAYS_REPLAY_REASON);
      else this.resident.keepWithinBudget();
      return result;
    }
    const committed = outcome.status === 'completed' ? await this.commitStore(run, outcome) : null;
    const { result } = await buildCellResult({
      outcome: committed ?? outcome,
      limits: run.limits,
      restartSafe: run.restartSafe,
      telemetry: run.host.telemetry(),
      priorOutputBytes: prior,
      saveReference: run.restartSafe
        ? undefined
        : async (valueJson) => {
            // A saved value, like any write of the run, comes after its reads' events, and is not
            // saved when they stopped the run: its end sent behind them then fails it (`record`).
            await run.host.landed();
            if (stoppedOnWrites(run.host)) return null;
            await claimedBeforeWrite(run);
            return this.results.save(run.ref, valueJson, run.limits).then(
              (d) => ({ ...d }),
              () => null,
            );
          },
    });
    const claimedBy = await this.claimedByEnd(run);
    // SPEC §13: a stream entry is acknowledged in the end's socket write, after the end script (EntryAck).
    const ack = run.entryAck;
    await this.ends.finish(run, result, { replyTo, beside: ack && (() => ack.beside()), claimedBy, trailMark });
    this.resident.ended(run);
    return result;
  }

  /**
   * SPEC §13: a new cell that nothing claimed yet is claimed by its end: this worker's id, for
   * finish-run to claim it with; undefined once it is claimed.
   * @throws RunNotStartedError when its claim was declined
   */
  private async claimedByEnd(run: WorkerRun): Promise<string | undefined> {
    const answer = await run.claimGate?.forEnd();
    if (answer === 'fused') return this.config.workerId;
    if (answer && !answer.started) throw new RunNotStartedError(run.runId, answer.status);
    return undefined;
  }

  /**
   * SPEC §4: buffered store writes are committed only when the cell completes, capacity
   * re-checked in commit order; a commit the store no longer has room for fails the cell instead.
   */
  private async commitStore(run: WorkerRun, outcome: TerminalCellOutcome): Promise<TerminalCellOutcome | null> {
    const writes = run.host.storeWrites();
    if (writes.size === 0) return null;
    try {
      await this.sessionStore.commit(run.ref, { runId: run.runId, epoch: run.epoch, writes });
      return null;
    } catch (error) {
      if (!(error instanceof StoreCapacityError)) throw error;
      return failedOutcome({ code: 'internal_error', phase: 'host', error: `RangeError: ${error.message}` }, outcome);
    }
  }
}
