import { Inject, Injectable } from '@nestjs/common';
import type { CellJob, CellSpec, CodeModeResult, ReplayJob, ReplayPlan, ResumeJob, RunView, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { EventLog, RunLedger, WorkerPresence } from '@codemode/events';
import { buildReplayPlan, emptyTelemetry, ReplayRecordMissingError } from '@codemode/sandbox';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { catalogHash, CellRunner } from '../runs/cell-runner.service';
import { ToolHosts } from '../tools/tool-hosts.service';
import { runHistory, type RunHistory } from './run-history';

/** SPEC §3 result of a cell lost with its worker after it had called tools that cannot run twice. */
export const LOST_WITH_WORKER_ERROR =
  'code mode run was lost with its worker after it called tools; it was not run again, so no tool ran twice. Start a new run.';
const STALLED_REASON = 'its worker stopped while the cell ran (lease expired)';
const NOT_HELD_REASON = 'the parked cell is no longer in its worker’s memory';

/**
 * Recovery (SPEC §6): rebuilds a replay-safe run whose owner is gone on this worker by replaying
 * its log, and decides what a cell job re-delivered after its worker died may do: run again from
 * the start (it had called no tool), replay (restartSafe), or end `run.lost`.
 */
@Injectable()
export class ReplayRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly log: EventLog,
    private readonly presence: WorkerPresence,
    private readonly toolHosts: ToolHosts,
    private readonly cells: CellRunner,
    private readonly metrics: WorkerMetrics,
  ) {}

  /** A `wait` on a parked replay-safe run whose owner is gone: take it over, replay it, resume it. */
  async replay(job: ReplayJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    if (!job.resume) {
      await this.recoverRunning(ref, job.runId, job.replyTo, null, log);
      return;
    }
    const run = await this.runs.get(ref, job.runId);
    if (!run || run.status !== 'waiting' || !run.restartSafe) {
      log.info({ status: run?.status }, 'replay not needed: the run is not a parked replay-safe run');
      return;
    }
    const history = runHistory(await this.log.history(ref, Date.parse(run.createdAt)), job.runId);
    const taken = await this.runs.takeOver(ref, job.runId, {
      workerId: this.config.workerId,
      from: { owner: run.owner, epoch: run.epoch },
      token: job.resume.token,
      reason: run.owner ? 'the owner’s lease expired' : 'the owner released the run',
    });
    if (!taken.taken) {
      log.info({ status: taken.status }, 'replay not taken: another worker or wait got the run first');
      return;
    }
    const resumed = await this.runs.resume(ref, job.runId, {
      token: job.resume.token,
      workerId: this.config.workerId,
      epoch: taken.epoch,
      replyTo: job.replyTo,
      input: job.resume.input,
    });
    if (!resumed) return;
    await this.rebuild(ref, job.runId, taken.epoch, history, job.replyTo, this.specOf(history, null), log);
  }

  /**
   * A wait reached the owner, which no longer holds the VM (it expired a moment ago, or was
   * handed over): a replay-safe run is rebuilt here, any other is lost.
   */
  async resumeNotHeld(job: ResumeJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const run = await this.runs.get(ref, job.runId);
    if (run?.restartSafe && run.status === 'waiting') {
      await this.replay({ ...job, resume: { token: job.token, input: job.input } });
      return;
    }
    if (run && run.status === 'waiting') {
      await this.runs.append(ref, { type: 'run.lost', runId: job.runId, epoch: run.epoch, data: { reason: NOT_HELD_REASON } }).catch(() => undefined);
    }
  }

  /**
   * A cell job BullMQ re-delivered after the worker running it stalled. Never runs the cell twice
   * blindly: only once its owner's lease is gone, and then by what the log shows.
   */
  async recoverStalled(job: CellJob): Promise<void> {
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    await this.recoverRunning({ tenant: job.tenant, sessionId: job.sessionId }, job.runId, job.replyTo, job.spec, log);
  }

  /**
   * A run left `running` by a worker whose lease is gone: its first leg (the cell job was
   * re-delivered; `spec` is the job's) or a wait's leg (a wait found it so; no spec). Replay-safe
   * runs are rebuilt and go on; a first leg that called no tool runs again; others end `run.lost`.
   * The answer goes to `replyTo`.
   */
  private async recoverRunning(ref: SessionRef, runId: string, replyTo: string, spec: CellSpec | null, log: Logger): Promise<void> {
    const run = await this.runs.get(ref, runId);
    if (!run || run.status !== 'running' || run.owner === this.config.workerId) return;
    if (run.owner && (await this.presence.isAlive(run.owner))) {
      log.warn({ owner: run.owner }, 'running run whose owner is still alive; left to its owner');
      return;
    }
    const history = runHistory(await this.log.history(ref, Date.parse(run.createdAt)), runId);
    const taken = await this.runs.takeOver(ref, runId, { workerId: this.config.workerId, from: { owner: run.owner, epoch: run.epoch }, reason: STALLED_REASON });
    if (!taken.taken) return;
    if (run.restartSafe) {
      log.warn({ from: run.owner }, 'rebuilding a replay-safe run whose worker died mid-leg, by replay');
      await this.rebuild(ref, runId, taken.epoch, history, replyTo, this.specOf(history, spec), log);
    } else if (spec && !history.toolCalled) {
      log.warn({ from: run.owner }, 'running again a cell whose worker died before it called any tool');
      const host = await this.toolHosts.create(ref, runId, taken.epoch, spec);
      await this.cells.execute({ ref, runId, epoch: taken.epoch, spec, host, replyTo, log });
    } else {
      log.warn({ from: run.owner }, 'run lost with its worker after calling tools; recorded as lost');
      await this.lose(ref, run, taken.epoch, replyTo);
    }
  }

  private async rebuild(ref: SessionRef, runId: string, epoch: number, history: RunHistory, replyTo: string, spec: CellSpec, log: Logger): Promise<void> {
    const started = performance.now();
    const host = await this.toolHosts.create(ref, runId, epoch, spec);
    const plan = this.planOf(history, catalogHash(host.catalog.guestCatalog()));
    this.metrics.resumed('replay');
    if (typeof plan === 'string') {
      log.error({ divergence: plan }, 'run cannot be rebuilt from its log');
      await this.cells.execute({ ref, runId, epoch, spec, host, replyTo, log, divergence: plan });
    } else {
      await this.cells.execute({ ref, runId, epoch, spec, host, replyTo, log, seed: history.recovery?.seed, replay: plan });
    }
    this.metrics.replayDuration.observe((performance.now() - started) / 1000);
  }

  /** The plan, or why the run cannot be replayed (a divergence the run fails with). */
  private planOf(history: RunHistory, currentCatalogHash: string): ReplayPlan | string {
    if (history.unreplayable) return history.unreplayable;
    if (history.recovery?.catalogHash !== currentCatalogHash) return 'the session’s tools changed since the run started';
    try {
      return buildReplayPlan(history.journals, history.calls);
    } catch (error) {
      if (error instanceof ReplayRecordMissingError) return error.detail;
      throw error;
    }
  }

  /** The cell as it was requested; shell settings and agent do not matter to replay-safe cells. */
  private specOf(history: RunHistory, fallback: CellSpec | null): CellSpec {
    const requested = history.requested;
    if (!requested) {
      if (fallback) return fallback;
      throw new Error('run.requested is missing from the log');
    }
    return {
      title: requested.title,
      code: requested.code,
      restartSafe: requested.restartSafe,
      awaitResults: requested.awaitResults,
      limits: requested.limits,
      shell: fallback?.shell ?? this.config.shellDefaults,
      agentId: fallback?.agentId ?? null,
    };
  }

  private async lose(ref: SessionRef, run: RunView, epoch: number, replyTo: string): Promise<void> {
    const result: CodeModeResult = {
      status: 'failed',
      error: LOST_WITH_WORKER_ERROR,
      code: 'runtime_unavailable',
      failurePhase: 'host',
      bridgeDispatchStarted: true,
      replaySafe: false,
      telemetry: emptyTelemetry(),
    };
    await this.runs.append(ref, {
      type: 'run.lost',
      runId: run.runId,
      epoch,
      data: { reason: STALLED_REASON, result },
      publish: { channel: replyTo, message: JSON.stringify({ kind: 'result', runId: run.runId, result }) },
    });
  }
}
