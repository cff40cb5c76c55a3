import { Inject, Injectable } from '@nestjs/common';
import type { CodeModeResult, ReplayPlan } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { publishStarted } from '@codemode/events';
import type { RedisClient } from '@codemode/events';
import { failedOutcome, TIMEOUT_MESSAGE, type CellOutcome } from '@codemode/cells';
import { SandboxPool, type CellRunRequest, type RestorePlan } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, REDIS } from '../core/tokens';
import { RunOutcomes } from './run-outcomes.service';
import { RunningLegs } from './running-legs.service';
import type { WorkerRun } from './worker-run';

/**
 * The kinds of leg a run has on a worker:
 * - `first`: the cell from its start (its first exec, or a rerun of one that touched nothing
 *   outside its VM before its worker died); `seed` for replay-safe runs;
 * - `replay`: rebuilt from its log, then on live (SPEC §6);
 * - `resume`: its parked VM here, resumed by a wait;
 * - `restore`: its parked image from Redis, restored into a new VM (SPEC §12);
 * - `none`: no leg runs; the run ends with `outcome` (a replay that cannot be rebuilt, a restore
 *   whose open call is lost, a resume aborted before it ran).
 */
export type Leg =
  | { kind: 'first'; seed?: number[] }
  | { kind: 'replay'; seed?: number[]; plan: ReplayPlan }
  | { kind: 'resume' }
  | { kind: 'restore'; seed?: number[]; image: Uint8Array; plan: RestorePlan }
  | { kind: 'none'; outcome: CellOutcome };

const SANDBOX_FAILED: Record<Exclude<Leg['kind'], 'none'>, string> = {
  first: 'sandbox failed to run the cell',
  replay: 'sandbox failed to run the cell',
  resume: 'sandbox failed to resume the run',
  restore: 'sandbox failed to restore the run',
};

/**
 * The one leg runner: begins the leg on the run's tool host, runs it in the sandbox pool (keeping
 * on while an `awaitResults` run would park), turns a sandbox failure into the host failure
 * outcome, and hands the outcome to RunOutcomes, which records it and answers `replyTo`.
 */
@Injectable()
export class LegRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly pool: SandboxPool,
    private readonly outcomes: RunOutcomes,
    private readonly running: RunningLegs,
  ) {}

  /** `startedAt`: when the exec or wait this leg answers started (epoch ms), for `codemode_run_duration_seconds`. */
  async run(run: WorkerRun, leg: Leg, replyTo: string, log: Logger, startedAt = Date.now()): Promise<CodeModeResult> {
    if (leg.kind === 'replay') {
      // The rebuild may take a while: the caller's answer deadline restarts with the live leg.
      run.host.whenReplayed(() => {
        publishStarted(this.redis, replyTo, run.runId, this.config.workerId).catch((error: unknown) =>
          log.warn({ err: error }, 'could not tell the caller the rebuilt run goes on'),
        );
      });
    }
    const ofLeg = run.leg;
    try {
      const outcome = leg.kind === 'none' ? leg.outcome : await this.sandbox(run, leg, log);
      return await this.outcomes.record(run, outcome, replyTo, startedAt);
    } finally {
      // Parked or ended (or its outcome could not be recorded: the live-run sweep's then): no longer
      // a leg to rebuild. Unless a wait resumed it meanwhile: the index names the run's next leg then.
      if (run.leg === ofLeg) this.running.ended(run);
    }
  }

  private async sandbox(run: WorkerRun, leg: Exclude<Leg, { kind: 'none' }>, log: Logger): Promise<CellOutcome> {
    try {
      run.host.beginLeg(run.limits.timeoutMs);
      const first = await this.start(run, leg);
      return run.awaitResults ? await this.keepResuming(run, first) : first;
    } catch (error) {
      log.error({ err: error }, SANDBOX_FAILED[leg.kind]);
      return hostFailureOutcome();
    }
  }

  private start(run: WorkerRun, leg: Exclude<Leg, { kind: 'none' }>): Promise<CellOutcome> {
    const tenant = run.ref.tenant;
    if (leg.kind === 'resume') {
      return this.pool.resume(run.runId, { timeoutMs: run.limits.timeoutMs, awaitResults: run.awaitResults }, run.host);
    }
    const request: CellRunRequest = {
      runId: run.runId,
      code: run.spec.code,
      limits: run.limits,
      awaitResults: run.awaitResults,
      restartSafe: run.restartSafe,
      catalogJson: run.host.guestCatalogJson(),
      seed: leg.seed,
      ...(leg.kind === 'replay' ? { replay: leg.plan } : {}),
      // SPEC §12: each park writes the run's image, so any worker can resume it.
      parkImage: true,
    };
    if (leg.kind === 'restore') return this.pool.restore(request, leg.image, leg.plan, run.host, tenant);
    return this.pool.run(request, run.host, tenant);
  }

  /**
   * `awaitResults: true`: a cell that would park is resumed at once with a fresh budget, output
   * gathered across resumes, until it completes or fails or `snapshotTtlSeconds` have passed.
   */
  private async keepResuming(run: WorkerRun, first: CellOutcome): Promise<CellOutcome> {
    const until = Date.now() + run.limits.snapshotTtlSeconds * 1000;
    const output = [...first.output];
    let outcome = first;
    while (outcome.status === 'waiting') {
      const left = until - Date.now();
      if (left <= 0) {
        this.pool.discard(run.runId);
        return failedOutcome({ code: 'timeout', phase: 'guest', error: TIMEOUT_MESSAGE }, { ...outcome, output });
      }
      const timeoutMs = Math.min(run.limits.timeoutMs, left);
      run.host.beginLeg(timeoutMs);
      outcome = await this.pool.resume(run.runId, { timeoutMs, awaitResults: true }, run.host);
      output.push(...outcome.output);
    }
    return { ...outcome, output };
  }
}

/** The sandbox itself failed (not the cell): a host-phase internal error. */
function hostFailureOutcome(): CellOutcome {
  return failedOutcome({
    code: 'internal_error',
    phase: 'host',
    error: 'code mode sandbox failed to run the cell; the failure was logged.',
  });
}
