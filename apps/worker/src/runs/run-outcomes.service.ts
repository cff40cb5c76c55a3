import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { RUN_END_REASONS, type CodeModeResult, type Limits, type SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import {
  ParkedRunIndex,
  resultReply,
  retryWhileStoreUnavailable,
  RUN_HISTORY_LIMIT_MESSAGE,
  RunAlreadyEndedError,
  RunHistoryLimitError,
  RunLedger,
} from '@codemode/events';
import { buildCellResult, buildWaitingResult, SandboxPool, type CellOutcome, type TerminalCellOutcome } from '@codemode/sandbox';
import { ResultsStore, SessionStore, StoreCapacityError } from '@codemode/store';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { ParkedRunRegistry, type ParkedRun } from './parked-run-registry';
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
}

/** What a run that reached its history cap ends with, whatever its cell did (SPEC §6). */
function historyLimitOutcome(outcome: CellOutcome): TerminalCellOutcome {
  return {
    status: 'failed',
    code: 'internal_error',
    phase: 'host',
    error: RUN_HISTORY_LIMIT_MESSAGE,
    output: outcome.output,
    consoleTruncated: outcome.consoleTruncated,
    bridgeDispatchStarted: outcome.bridgeDispatchStarted,
  };
}

/** A cell that would have parked past its tenant's quota: it fails, and the run ends (SPEC §10). */
function parkedQuotaOutcome(outcome: CellOutcome, error: string): TerminalCellOutcome {
  return {
    status: 'failed',
    code: 'runtime_unavailable',
    phase: 'host',
    error,
    output: outcome.output,
    consoleTruncated: outcome.consoleTruncated,
    bridgeDispatchStarted: outcome.bridgeDispatchStarted,
  };
}

/** How long a run outcome is retried while Redis is unreachable. */
const RECORD_RETRY_MS = 10 * 60_000;

const ALWAYS_REPLAY_REASON = 'CODEMODE_ALWAYS_REPLAY: every wait rebuilds the run by replay';

/**
 * Records a cell's outcome in the log and pushes the answer: a terminal event for completed and
 * failed cells, `run.parked` for waiting ones (which also enter the parked-run registry). Owns
 * expiry and loss of parked runs.
 */
@Injectable()
export class RunOutcomes implements OnModuleDestroy {
  readonly parked: ParkedRunRegistry;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly pool: SandboxPool,
    private readonly sessionStore: SessionStore,
    private readonly results: ResultsStore,
    private readonly metrics: WorkerMetrics,
    private readonly parkedIndex: ParkedRunIndex,
    private readonly limits: WorkerTenantLimits,
  ) {
    this.parked = new ParkedRunRegistry((run) => void this.expire(run));
    this.pool.onRunsLost((runIds, reason) => {
      for (const runId of runIds) void this.lose(runId, reason);
    });
  }

  onModuleDestroy(): void {
    this.parked.close();
  }

  /** `legStartedAt`: when this exec or wait leg started (epoch ms), for `codemode_run_duration_seconds`. */
  async record(ctx: RunContext, outcome: CellOutcome, replyTo: string, legStartedAt: number): Promise<CodeModeResult> {
    const result = await this.untilRecorded(ctx, async () => {
      try {
        return await this.write(ctx, ctx.host.historyFull ? historyLimitOutcome(outcome) : outcome, replyTo);
      } catch (error) {
        // SPEC §6: the run reached its history cap while being recorded (parking it, committing
        // its store): it fails with the cap's error, which is always recorded.
        if (!(error instanceof RunHistoryLimitError)) throw error;
        this.dropParked(ctx.runId);
        return this.write(ctx, historyLimitOutcome(outcome), replyTo);
      }
    }).catch((error: unknown) => {
      this.dropParked(ctx.runId);
      throw error;
    });
    this.metrics.runAnswered(result, legStartedAt);
    return result;
  }

  /**
   * The outcome could not be recorded (the run was taken over or ended meanwhile, or Redis stayed
   * away): a VM parked for it must not stay in memory and hold a parked slot.
   */
  private dropParked(runId: string): void {
    const run = this.parked.take(runId);
    if (!run) return;
    this.pool.discard(runId);
    this.limits.releaseParked(run.ref, runId);
  }

  /**
   * SPEC §6, nothing acknowledged is lost: an outcome that could not be written because Redis was
   * unreachable is written again once it answers (the exec or wait may have been answered
   * `runtime_unavailable` meanwhile; the run still gets its one terminal event). A retry that
   * finds the run already ended (the first write landed, its reply did not) answers what it holds.
   */
  private untilRecorded(ctx: RunContext, write: () => Promise<CodeModeResult>): Promise<CodeModeResult> {
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
          this.logger.warn({ ...fields, attempt, retryInMs }, 'Redis unavailable; recording the run outcome again'),
      },
    );
  }

  private async write(ctx: RunContext, outcome: CellOutcome, replyTo: string): Promise<CodeModeResult> {
    if (outcome.status === 'waiting') {
      const expiresAt = Date.now() + ctx.limits.snapshotTtlSeconds * 1000;
      // SPEC §10: past its tenant's parked-run quota (runs or bytes) the cell fails instead of parking.
      const admission = await this.limits.admitParked(ctx.ref, ctx.runId, expiresAt, outcome.snapshotBytes);
      if (!admission.admitted) {
        this.pool.discard(ctx.runId);
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
      this.parked.park({ ...ctx, holdsParkedQuota: true, priorOutputBytes: ctx.priorOutputBytes + outputBytes, expiresAt });
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
      // Best effort: lets any worker expire the run if its holder goes away (ParkedRunSweeper).
      await this.parkedIndex
        .add(ctx.ref, ctx.runId, expiresAt)
        .catch((error: unknown) => this.logger.warn({ runId: ctx.runId, err: error }, 'could not index the parked run for expiry'));
      if (this.config.alwaysReplay && ctx.restartSafe) await this.handOver(ctx.runId, ALWAYS_REPLAY_REASON);
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
    if (ctx.holdsParkedQuota) this.limits.releaseParked(ctx.ref, ctx.runId);
    return result;
  }

  /**
   * Shutdown: parked VMs cannot stay here. Replay-safe runs are released (the
   * next wait rebuilds them by replay at once); the others end as `run.lost`. Every write is
   * fenced by the run's epoch, so a run another worker already took is left alone.
   */
  async giveUpAllParked(reason: string): Promise<void> {
    const runIds = [...this.parked.runIds()];
    await Promise.all(
      runIds.map((runId) => (this.parked.get(runId)?.restartSafe ? this.handOver(runId, reason) : this.lose(runId, reason))),
    );
  }

  /**
   * After this worker's lease lapsed: keeps each parked run that is still this worker's at the
   * same epoch and still waiting (nobody acted on it meanwhile), and drops the others from memory
   * without writing anything (another worker took them over, or the API ended them).
   */
  async reconcileParked(): Promise<{ kept: number; dropped: number }> {
    let kept = 0;
    let dropped = 0;
    for (const runId of [...this.parked.runIds()]) {
      const parked = this.parked.get(runId);
      if (!parked) continue;
      const now = await this.runs.get(parked.ref, runId);
      if (now?.status === 'waiting' && now.owner === this.config.workerId && now.epoch === parked.epoch) {
        kept += 1;
        continue;
      }
      if (this.parked.get(runId) !== parked) continue;
      this.parked.take(runId);
      this.pool.discard(runId);
      dropped += 1;
    }
    return { kept, dropped };
  }

  /** Drops a parked replay-safe run from memory and releases it in the ledger. */
  private async handOver(runId: string, reason: string): Promise<void> {
    const run = this.parked.take(runId);
    if (!run) return;
    this.pool.discard(runId);
    try {
      const released = await this.runs.release(run.ref, runId, { workerId: this.config.workerId, epoch: run.epoch, reason });
      this.logger.info(
        { tenant: run.ref.tenant, sessionId: run.ref.sessionId, runId, released, reason },
        'parked run handed over for replay',
      );
    } catch (error) {
      this.logger.warn(
        { tenant: run.ref.tenant, sessionId: run.ref.sessionId, runId, err: error },
        'could not release a parked run; its lease will lapse',
      );
    }
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
      return {
        status: 'failed',
        error: `RangeError: ${error.message}`,
        code: 'internal_error',
        phase: 'host',
        output: outcome.output,
        consoleTruncated: outcome.consoleTruncated,
        bridgeDispatchStarted: outcome.bridgeDispatchStarted,
      };
    }
  }

  private async expire(run: ParkedRun): Promise<void> {
    this.pool.discard(run.runId);
    this.limits.releaseParked(run.ref, run.runId);
    await this.endParked(run.ref, run.runId, run.epoch, 'run.expired', RUN_END_REASONS.expired);
  }

  private async lose(runId: string, reason: string): Promise<void> {
    const run = this.parked.take(runId);
    if (!run) return;
    this.limits.releaseParked(run.ref, runId);
    await this.endParked(run.ref, runId, run.epoch, 'run.lost', reason);
  }

  private async endParked(ref: SessionRef, runId: string, epoch: number, type: 'run.expired' | 'run.lost', reason: string): Promise<void> {
    try {
      if (await this.runs.endOrphaned(ref, runId, { type, epoch, reason })) {
        this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId, runId, type, reason }, 'parked run ended');
      }
    } catch (error) {
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, runId, type, err: error },
        'could not record the end of a parked run',
      );
    }
  }

  get workerId(): string {
    return this.config.workerId;
  }
}
