import { Inject, Injectable } from '@nestjs/common';
import type { AbortJob, CodeModeResult, ResumeJob, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { RunAlreadyEndedError, RunLedger } from '@codemode/events';
import { emptyTelemetry, SandboxPool, type CellOutcome } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { hostFailureOutcome, keepResuming } from './run-loop';
import { RunOutcomes } from './run-outcomes.service';

export const ABORTED_ERROR = 'code mode execution aborted';
const NOT_HELD_REASON = 'the parked cell is no longer in its worker’s memory';

/** Work routed to this worker for runs it holds: resume a parked run, abort one. */
@Injectable()
export class ResumeRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly pool: SandboxPool,
    private readonly outcomes: RunOutcomes,
  ) {}

  async resume(job: ResumeJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    const parked = this.outcomes.parked.get(job.runId);
    if (!parked) {
      // The API saw it waiting, but its VM is gone from here (expired a moment ago, or lost).
      await this.runs.append(ref, { type: 'run.lost', runId: job.runId, epoch: 1, data: { reason: NOT_HELD_REASON } }).catch(() => undefined);
      return;
    }
    const taken = await this.runs.resume(ref, job.runId, {
      token: job.token,
      workerId: this.config.workerId,
      epoch: parked.epoch,
      replyTo: job.replyTo,
      input: job.input,
    });
    if (!taken) {
      log.info('resume not taken: the wait gave up or another took it');
      return;
    }
    this.outcomes.parked.take(job.runId);
    let outcome: CellOutcome;
    try {
      const next = await this.pool.resume(job.runId, { timeoutMs: parked.limits.timeoutMs, awaitResults: parked.awaitResults });
      outcome = parked.awaitResults ? await keepResuming(this.pool, job.runId, parked.limits, next) : next;
    } catch (error) {
      log.error({ err: error }, 'sandbox failed to resume the run');
      outcome = hostFailureOutcome();
    }
    const result = await this.outcomes.record(parked, outcome, job.replyTo);
    log.info({ status: result.status }, 'wait answered');
  }

  /** SPEC §3: aborted, pending calls cancelled, slot freed, nothing committed. */
  async abort(job: AbortJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const parked = this.outcomes.parked.take(job.runId);
    this.pool.discard(job.runId);
    const result: CodeModeResult = {
      status: 'failed',
      error: ABORTED_ERROR,
      code: 'aborted',
      failurePhase: 'host',
      bridgeDispatchStarted: false,
      replaySafe: parked?.restartSafe ?? false,
      telemetry: emptyTelemetry(),
    };
    try {
      await this.runs.finish(ref, job.runId, { epoch: parked?.epoch ?? 1, type: 'run.failed', result, replyTo: job.replyTo });
    } catch (error) {
      if (!(error instanceof RunAlreadyEndedError)) throw error;
    }
  }
}
