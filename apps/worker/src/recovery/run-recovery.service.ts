import { Inject, Injectable } from '@nestjs/common';
import type { CellJob, CellSpec, CodeModeResult, ReplayJob, ReplayPlan, ResumeJob, RunView, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { EventLog, retryWhileStoreUnavailable, RunAlreadyEndedError, RunEnds, RunLedger, RunOwnership } from '@codemode/events';
import { buildReplayPlan, ReplayRecordMissingError } from '@codemode/sandbox';
import { emptyTelemetry, failedInputResult, hostFailureResult, REPLAY_DIVERGED_PREFIX, RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { CellRunner, divergedOutcome } from '../runs/cell-runner.service';
import { RunningLegs } from '../runs/running-legs.service';
import { WorkerRun } from '../runs/worker-run';
import { ToolHosts } from '../tools/tool-hosts.service';
import { recordedSpec, runHistory, type RunHistory } from './run-history';
import { RunRestore } from './run-restore.service';

/** SPEC §3 result of a cell lost with its worker after it had called tools that cannot run twice. */
export const LOST_WITH_WORKER_ERROR =
  'code mode run was lost with its worker after it called tools; it was not run again, so no tool ran twice. Start a new run.';
const STALLED_REASON = 'its worker stopped while the cell ran (lease expired)';
const NOT_HELD_REASON = 'the parked cell is no longer in its worker’s memory';
const NO_IMAGE_REASON = 'its owner is gone and its image cannot be restored (missing, or another wasm binary or prelude version)';
const RECOVERY_FAILED_ERROR = 'code mode could not rebuild the run after its worker died; the failure was logged. Start a new run.';
/** How long ending a recovered run is retried while Redis is away. */
const FINISH_RETRY_MS = 10 * 60_000;

/**
 * Recovery (SPEC §6) of runs whose owner is gone (RunOwnership decides that): takes them over and
 * rebuilds a replay-safe one on this worker by replaying its log; a cell job re-delivered after
 * its worker died runs again from the start (it had called no tool), is replayed (restartSafe),
 * or ends `run.lost`; a wait that reached an owner no longer holding the run is recovered too.
 */
@Injectable()
export class RunRecovery {
  /** Runs this worker is recovering as running legs (recoverRunning), until that recovery is done. */
  private readonly recovering = new Set<string>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly events: EventLog,
    private readonly ownership: RunOwnership,
    private readonly toolHosts: ToolHosts,
    private readonly cells: CellRunner,
    private readonly ends: RunEnds,
    private readonly metrics: WorkerMetrics,
    private readonly restorer: RunRestore,
    private readonly running: RunningLegs,
  ) {}

  /**
   * A `wait` on a parked run whose owner is gone (SPEC §12): take it over and resume it from its
   * image, or, when the image cannot be used, replay it (replay-safe runs) or record it lost (the
   * wait answered unavailable). Without `resume`, a wait found the run `running` under a dead
   * owner (see recoverRunning).
   */
  async replay(job: ReplayJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    if (!job.resume) {
      await this.recoverRunning(ref, job.runId, job.replyTo, null, log);
      return;
    }
    // Twice at most: the owner may release the run between our read and the takeover.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const run = await this.runs.get(ref, job.runId);
      if (!run || run.status !== 'waiting') {
        log.info({ status: run?.status }, 'replay not needed: the run is not parked');
        return;
      }
      const image = await this.restorer.usableImage(ref, run, log);
      if (!image && !run.restartSafe) {
        const result = failedInputResult(RUN_UNAVAILABLE_MESSAGE, emptyTelemetry(), false);
        const lost = await this.ends.lose(
          { ref, runId: job.runId, epoch: run.epoch },
          { reason: NO_IMAGE_REASON, answer: { replyTo: job.replyTo, result, recorded: false } },
        );
        if (lost) this.metrics.recovered('lost');
        return;
      }
      const takeOver = {
        workerId: this.config.workerId,
        from: { owner: run.owner, epoch: run.epoch },
        token: job.resume.token,
        reason: run.owner ? 'the owner’s lease expired' : 'the owner released the run',
      };
      const indexed = { ref, runId: job.runId, restartSafe: run.restartSafe };
      const taken = await this.running.beside(
        indexed,
        job.replyTo,
        () => this.runs.takeOver(ref, job.runId, takeOver),
        (answer) => answer.taken,
      );
      if (!taken.taken) continue;
      const resumed = await this.runs.resume(ref, job.runId, {
        token: job.resume.token,
        workerId: this.config.workerId,
        epoch: taken.epoch,
        replyTo: job.replyTo,
        input: job.resume.input,
      });
      if (!resumed) {
        this.running.ended(indexed);
        return;
      }
      if (image) {
        await this.afterTakeover(ref, run, taken.epoch, job.replyTo, log, () =>
          this.restorer.restoreTaken(ref, run, taken.epoch, image, job.replyTo),
        );
      } else {
        await this.rebuildTaken(ref, run, taken.epoch, job.replyTo, null, log);
      }
      return;
    }
    log.info('replay not taken: another worker or wait got the run first');
  }

  /**
   * A wait reached the owner, which no longer holds the VM (it expired a moment ago, was evicted
   * or handed over): a run with a usable image is restored here, a replay-safe one rebuilt; any
   * other is lost, and the wait told so.
   */
  async resumeNotHeld(job: ResumeJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const run = await this.runs.get(ref, job.runId);
    if (run?.status !== 'waiting') return;
    if (run.restartSafe || (await this.restorer.usableImage(ref, run, this.logger))) {
      await this.replay({ ...job, resume: { token: job.token, input: job.input } });
      return;
    }
    const result = failedInputResult(RUN_UNAVAILABLE_MESSAGE, emptyTelemetry(), false);
    await this.ends.lose(
      { ref, runId: job.runId, epoch: run.epoch },
      { reason: NOT_HELD_REASON, answer: { replyTo: job.replyTo, result, recorded: false } },
    );
  }

  /**
   * A cell job BullMQ re-delivered after the worker running it stalled. Never runs the cell twice
   * blindly: only once its owner's lease is gone, and then by what the log shows. Answers false
   * when the owner still looks alive (its lease has not lapsed yet): try again later.
   */
  async recoverStalled(job: CellJob): Promise<boolean> {
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    return this.recoverRunning({ tenant: job.tenant, sessionId: job.sessionId }, job.runId, job.replyTo, job.spec, log);
  }

  /**
   * A run left `running` by a worker whose lease is gone: its first leg (the cell job was
   * re-delivered; `spec` is the job's) or a wait's leg (a wait found it so; no spec). Replay-safe
   * runs are rebuilt and go on; a first leg that did nothing outside its VM runs again; others end
   * `run.lost`. The answer goes to `replyTo`. False when the owner still looks alive.
   */
  private async recoverRunning(ref: SessionRef, runId: string, replyTo: string, spec: CellSpec | null, log: Logger): Promise<boolean> {
    // Two paths can reach one run here at once (a lapsed owner's rebuild and its re-delivered cell
    // job). From the first one's takeover until its VM is in the pool, this worker owns the run on
    // paper without holding it, which ownerGone reads as gone: the second would take the run over
    // from the first. It defers instead, as it does for a live owner.
    if (this.recovering.has(runId)) {
      log.info('running run whose recovery is under way here; recovery deferred');
      return false;
    }
    this.recovering.add(runId);
    try {
      return await this.recoverRunningOnce(ref, runId, replyTo, spec, log);
    } finally {
      this.recovering.delete(runId);
    }
  }

  private async recoverRunningOnce(ref: SessionRef, runId: string, replyTo: string, spec: CellSpec | null, log: Logger): Promise<boolean> {
    const run = await this.runs.get(ref, runId);
    if (!run || run.status !== 'running') return true;
    // This process may be the owner on paper without running it (a claim whose reply was lost):
    // RunOwnership judges this worker's own runs by what it holds, not by its lease.
    if (!(await this.ownership.ownerGone(run))) {
      log.info({ owner: run.owner }, 'running run whose owner is still alive; recovery deferred');
      return false;
    }
    const takeOver = { workerId: this.config.workerId, from: { owner: run.owner, epoch: run.epoch }, reason: STALLED_REASON };
    const taken = await this.running.beside(
      { ref, runId, restartSafe: run.restartSafe, timeoutMs: spec?.limits.timeoutMs },
      replyTo,
      () => this.runs.takeOver(ref, runId, takeOver),
      (answer) => answer.taken,
    );
    if (!taken.taken) return true;
    if (run.restartSafe) {
      log.warn({ from: run.owner }, 'rebuilding a replay-safe run whose worker died mid-leg, by replay');
      await this.rebuildTaken(ref, run, taken.epoch, replyTo, spec, log);
      return true;
    }
    await this.afterTakeover(ref, run, taken.epoch, replyTo, log, async () => {
      // Read after the takeover: the old owner can no longer add to it (fencing).
      const history = runHistory(await this.events.runEvents(ref, runId, Date.parse(run.createdAt)));
      // Only a first leg (a re-delivered cell job, never parked) that touched nothing outside
      // its VM may run again from the start.
      if (spec && !history.sideEffects && !history.parked) {
        log.warn({ from: run.owner }, 'running again a cell whose worker died before it called any tool');
        const rerunSpec = this.specOf(history, spec);
        const host = await this.toolHosts.create(ref, runId, taken.epoch, rerunSpec);
        await this.cells.execute(new WorkerRun(ref, runId, taken.epoch, rerunSpec, host), { kind: 'first' }, replyTo, log);
        this.metrics.recovered('rerun');
      } else {
        log.warn({ from: run.owner }, 'run lost with its worker after calling tools; recorded as lost');
        await this.finishTaken(
          ref,
          runId,
          taken.epoch,
          replyTo,
          'run.lost',
          hostFailureResult(LOST_WITH_WORKER_ERROR, 'runtime_unavailable', false, true),
        );
        this.metrics.recovered('lost');
      }
    });
    return true;
  }

  /** Rebuilds a run this worker just took over (at `epoch`) from its log, then lets it go on. */
  private async rebuildTaken(
    ref: SessionRef,
    run: RunView,
    epoch: number,
    replyTo: string,
    spec: CellSpec | null,
    log: Logger,
  ): Promise<void> {
    await this.afterTakeover(ref, run, epoch, replyTo, log, async () => {
      const started = performance.now();
      // Read after the takeover: the old owner can no longer add to it (fencing).
      const history = runHistory(await this.events.runEvents(ref, run.runId, Date.parse(run.createdAt)));
      const cellSpec = this.specOf(history, spec);
      const host = await this.toolHosts.create(ref, run.runId, epoch, cellSpec);
      const plan = this.planOf(history, host.guestCatalogHash());
      this.metrics.resumed('replay');
      const rebuilt = new WorkerRun(ref, run.runId, epoch, cellSpec, host);
      if (typeof plan === 'string') {
        log.error({ divergence: plan }, 'run cannot be rebuilt from its log');
        await this.cells.execute(rebuilt, { kind: 'none', outcome: divergedOutcome(plan) }, replyTo, log);
        this.metrics.recovered('diverged');
      } else {
        const result = await this.cells.execute(rebuilt, { kind: 'replay', seed: history.recovery?.seed, plan }, replyTo, log);
        const diverged = result.status === 'failed' && result.error.startsWith(REPLAY_DIVERGED_PREFIX);
        if (diverged) log.error({ error: result.error }, 'replay diverged from the recorded run');
        this.metrics.recovered(diverged ? 'diverged' : 'replayed');
      }
      this.metrics.replayDuration.observe((performance.now() - started) / 1000);
    });
  }

  /**
   * Runs the work that follows a takeover; if it throws, the run (now this worker's, so nobody
   * else will end it) fails with a host error instead of staying `running`.
   */
  private async afterTakeover(
    ref: SessionRef,
    run: RunView,
    epoch: number,
    replyTo: string,
    log: Logger,
    work: () => Promise<void>,
  ): Promise<void> {
    try {
      await work();
    } catch (error) {
      log.error({ err: error }, 'recovery failed after taking the run over; failing the run');
      this.running.ended({ ref, runId: run.runId, restartSafe: run.restartSafe });
      this.metrics.recovered('failed');
      const result = hostFailureResult(RECOVERY_FAILED_ERROR, 'internal_error', run.restartSafe, true);
      await this.finishTaken(ref, run.runId, epoch, replyTo, 'run.failed', result).catch((failure: unknown) =>
        log.error({ err: failure }, 'could not record the failed recovery'),
      );
    }
  }

  /** Ends a run this worker holds at `epoch`, retrying while Redis is away; answers `replyTo`. */
  private async finishTaken(
    ref: SessionRef,
    runId: string,
    epoch: number,
    replyTo: string,
    type: 'run.failed' | 'run.lost',
    result: CodeModeResult,
  ): Promise<void> {
    const run = { ref, runId, epoch };
    await retryWhileStoreUnavailable(
      async () => {
        if (type === 'run.lost') {
          await this.ends.lose(run, { reason: STALLED_REASON, answer: { replyTo, result, recorded: true } });
          return;
        }
        try {
          await this.ends.finish(run, result, { replyTo });
        } catch (error) {
          if (!(error instanceof RunAlreadyEndedError)) throw error;
        }
      },
      { giveUpMs: FINISH_RETRY_MS },
    );
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

  /** The run's spec from its log (the one source); a log without a readable `run.requested` falls back to the re-delivered cell job's. */
  private specOf(history: RunHistory, job: CellSpec | null): CellSpec {
    const spec = recordedSpec(history, job, this.config.shellDefaults) ?? job;
    if (!spec) throw new Error('run.requested is missing from the log');
    return spec;
  }
}
