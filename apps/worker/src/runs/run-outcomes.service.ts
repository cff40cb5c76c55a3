import { Inject, Injectable } from '@nestjs/common';
import type { CodeModeResult, Limits, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import {
  isStoreUnavailable,
  LiveRunIndex,
  ParkedRunIndex,
  resultReply,
  retryWhileStoreUnavailable,
  RUN_HISTORY_LIMIT_MESSAGE,
  RunAlreadyEndedError,
  RunHistoryLimitError,
  RunLedger,
  storeStopMessage,
  toStoreError,
} from '@codemode/events';
import {
  buildCellResult,
  buildWaitingResult,
  failedOutcome,
  hostFailureResult,
  type CellOutcome,
  type TerminalCellOutcome,
} from '@codemode/sandbox';
import { ResultsStore, SessionStore, StoreCapacityError } from '@codemode/store';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { ParkedImages } from './parked-images.service';
import { ParkedRuns } from './parked-runs.service';
import type { RunToolHost } from '../tools/run-tool-host';

/** Everything needed to record what a run's cell just did. */
export interface RunContext {
  ref: SessionRef;
  runId: string;
  epoch: number;
  limits: Limits;
  restartSafe: boolean;
  awaitResults: boolean;
  priorOutputBytes: number;
  host: RunToolHost;
  /** It parked before and holds a place in its tenant's parked-run quota, given back when it ends. */
  holdsParkedQuota?: boolean;
  /** Its image is in Redis (SPEC §12): any worker can resume it once this one lets it go. */
  imaged?: boolean;
}

/** Why a claimed run failed before it ran (`RunOutcomes.failUnprepared`). */
const UNPREPARED_MESSAGE =
  "code mode could not read the session's tools or policy to run the cell; the failure was logged. Retry the exec.";

/** What a run that reached its history cap ends with, whatever its cell did (SPEC §6). */
function historyLimitOutcome(outcome: CellOutcome): TerminalCellOutcome {
  return failedOutcome({ code: 'internal_error', phase: 'host', error: RUN_HISTORY_LIMIT_MESSAGE }, outcome);
}

/** What a run its host stopped ends with, whatever its cell did: the history cap, or a Redis failure of a host call. */
function stoppedOutcome(host: RunToolHost, outcome: CellOutcome): CellOutcome {
  if (host.historyFull) return historyLimitOutcome(outcome);
  const storeFailure = host.storeFailure;
  return storeFailure === null ? outcome : failedOutcome({ code: 'runtime_unavailable', phase: 'host', error: storeFailure }, outcome);
}

/** A cell that would have parked past its tenant's quota: it fails, and the run ends (SPEC §10). */
function parkedQuotaOutcome(outcome: CellOutcome, error: string): TerminalCellOutcome {
  return failedOutcome({ code: 'runtime_unavailable', phase: 'host', error }, outcome);
}

/** How long a run outcome is retried while Redis is unreachable. */
const RECORD_RETRY_MS = 10 * 60_000;

const ALWAYS_REPLAY_REASON = 'CODEMODE_ALWAYS_REPLAY: every wait rebuilds the run by replay';

/**
 * Records a cell's outcome in the log and pushes the answer: a terminal event for completed and
 * failed cells, `run.parked` for waiting ones (which then stay parked on this worker: ParkedRuns).
 */
@Injectable()
export class RunOutcomes {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly parked: ParkedRuns,
    private readonly sessionStore: SessionStore,
    private readonly results: ResultsStore,
    private readonly metrics: WorkerMetrics,
    private readonly parkedIndex: ParkedRunIndex,
    private readonly live: LiveRunIndex,
    private readonly limits: WorkerTenantLimits,
    private readonly images: ParkedImages,
  ) {}

  /** `legStartedAt`: when this exec or wait leg started (epoch ms), for `codemode_run_duration_seconds`. */
  async record(ctx: RunContext, outcome: CellOutcome, replyTo: string, legStartedAt: number): Promise<CodeModeResult> {
    const result = await this.untilRecorded(ctx, async () => {
      try {
        return await this.write(ctx, stoppedOutcome(ctx.host, outcome), replyTo);
      } catch (error) {
        // SPEC §6: the run reached its history cap while being recorded (parking it, committing
        // its store): it fails with the cap's error, which is always recorded.
        if (!(error instanceof RunHistoryLimitError)) throw error;
        this.parked.dropUnrecorded(ctx.runId);
        // The run ends here: an image its refused park left in Redis would only wait for its TTL.
        this.images.drop(ctx.ref, ctx.runId);
        return this.write(ctx, historyLimitOutcome(outcome), replyTo);
      }
    }).catch((error: unknown) => {
      this.parked.dropUnrecorded(ctx.runId);
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
      await this.runs.finish(run.ref, run.runId, { epoch: run.epoch, type: 'run.failed', result, replyTo });
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
  private untilRecorded(ctx: Pick<RunContext, 'ref' | 'runId'>, write: () => Promise<CodeModeResult>): Promise<CodeModeResult> {
    const fields = { tenant: ctx.ref.tenant, sessionId: ctx.ref.sessionId, runId: ctx.runId };
    return retryWhileStoreUnavailable(
      async (attempt) => {
        try {
          return await write();
        } catch (error) {
          if (attempt === 1 || !(error instanceof RunAlreadyEndedError)) throw error;
          const run = await this.runs.get(ctx.ref, ctx.runId);
          if (!run?.lastResult) throw error;
          return run.lastResult;
        }
      },
      {
        giveUpMs: RECORD_RETRY_MS,
        onRetry: (attempt, retryInMs) =>
          this.logger.warn({ ...fields, attempt, retryInMs }, 'Redis unavailable or full; recording the run outcome again'),
      },
    );
  }

  private async write(ctx: RunContext, outcome: CellOutcome, replyTo: string): Promise<CodeModeResult> {
    if (outcome.status === 'waiting') {
      const expiresAt = Date.now() + ctx.limits.snapshotTtlSeconds * 1000;
      // SPEC §10: past its tenant's parked-run quota (runs or bytes) the cell fails instead of
      // parking. Its VM is in this worker's memory: it counts its wasm memory, not its image.
      const admission = await this.limits.admitParked(ctx.ref, ctx.runId, expiresAt, outcome.memoryBytes);
      if (!admission.admitted) {
        this.parked.discard(ctx.runId);
        const error = this.limits.parkedRefusal(ctx.ref.tenant, admission);
        return this.write({ ...ctx, holdsParkedQuota: false }, parkedQuotaOutcome(outcome, error), replyTo);
      }
      const { result, outputBytes } = buildWaitingResult({
        runId: ctx.runId,
        reason: outcome.reason,
        pending: outcome.pending,
        output: outcome.output,
        limits: ctx.limits,
        restartSafe: ctx.restartSafe,
        telemetry: ctx.host.telemetry(),
        priorOutputBytes: ctx.priorOutputBytes,
      });
      const parked = { ...ctx, holdsParkedQuota: true, priorOutputBytes: ctx.priorOutputBytes + outputBytes, expiresAt };
      // SPEC §12: the image is in Redis before the park is acknowledged, so any worker can resume the run.
      // CODEMODE_ALWAYS_REPLAY: a replay-safe run is always rebuilt by replay, so it gets no image.
      const imaged = this.config.alwaysReplay && ctx.restartSafe ? false : await this.images.save(parked, outcome, expiresAt);
      this.parked.park({ ...parked, imaged, imageBytes: outcome.snapshotBytes });
      await this.runs.append(ctx.ref, {
        type: 'run.parked',
        runId: ctx.runId,
        epoch: ctx.epoch,
        data: {
          result,
          expiresAt: new Date(expiresAt).toISOString(),
          snapshotBytes: outcome.snapshotBytes,
          ...(outcome.journal ? { journal: outcome.journal } : {}),
        },
        publish: resultReply(replyTo, ctx.runId, result),
      });
      this.leftLive(ctx);
      // Best effort: lets any worker expire the run if its holder goes away (ParkedRunSweeper).
      await this.parkedIndex
        .add(ctx.ref, ctx.runId, expiresAt)
        .catch((error: unknown) => this.logger.warn({ runId: ctx.runId, err: error }, 'could not index the parked run for expiry'));
      if (this.config.alwaysReplay && ctx.restartSafe) await this.parked.handOver(ctx.runId, ALWAYS_REPLAY_REASON);
      else this.parked.keepWithinBudget();
      return result;
    }
    const committed = outcome.status === 'completed' ? await this.commitStore(ctx, outcome) : null;
    const { result } = await buildCellResult({
      outcome: committed ?? outcome,
      limits: ctx.limits,
      restartSafe: ctx.restartSafe,
      telemetry: ctx.host.telemetry(),
      priorOutputBytes: ctx.priorOutputBytes,
      saveReference: ctx.restartSafe
        ? undefined
        : (valueJson) =>
            this.results.save(ctx.ref, valueJson, ctx.limits).then(
              (d) => ({ ...d }),
              () => null,
            ),
    });
    await this.runs.finish(ctx.ref, ctx.runId, {
      epoch: ctx.epoch,
      type: result.status === 'completed' ? 'run.completed' : 'run.failed',
      result,
      replyTo,
    });
    this.leftLive(ctx);
    if (ctx.holdsParkedQuota) {
      this.limits.releaseParked(ctx.ref, ctx.runId);
      this.images.drop(ctx.ref, ctx.runId);
    }
    return result;
  }

  /** Parked or ended: no sweep needs to look at the run as live any more (best effort; the sweep forgets what stays). */
  private leftLive(ctx: RunContext): void {
    this.live.remove(ctx.ref, ctx.runId).catch(() => undefined);
  }

  /**
   * SPEC §4: buffered store writes are committed only when the cell completes, capacity
   * re-checked in commit order; a commit the store no longer has room for fails the cell instead.
   */
  private async commitStore(ctx: RunContext, outcome: TerminalCellOutcome): Promise<TerminalCellOutcome | null> {
    const writes = ctx.host.storeWrites();
    if (writes.size === 0) return null;
    try {
      await this.sessionStore.commit(ctx.ref, { runId: ctx.runId, epoch: ctx.epoch, writes });
      return null;
    } catch (error) {
      if (!(error instanceof StoreCapacityError)) throw error;
      return failedOutcome({ code: 'internal_error', phase: 'host', error: `RangeError: ${error.message}` }, outcome);
    }
  }
}
