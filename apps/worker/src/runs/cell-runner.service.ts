import { Inject, Injectable } from '@nestjs/common';
import type { CellJob, CodeModeResult, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { RunLedger } from '@codemode/events';
import { buildCellResult, emptyTelemetry, SandboxPool, type CellOutcome } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** Until leases and fencing arrive every run is owned at epoch 1. */
const FIRST_EPOCH = 1;

/** Runs one queued cell: claim it in the ledger, run it in the sandbox, record and push its answer. */
@Injectable()
export class CellRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly pool: SandboxPool,
  ) {}

  async run(job: CellJob): Promise<void> {
    const ref: SessionRef = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    const claim = await this.runs.start(ref, job.runId, { workerId: this.config.workerId, epoch: FIRST_EPOCH, replyTo: job.replyTo });
    if (!claim.started) {
      // Abandoned by the API (not started within its budget) or already handled: never run it.
      log.info({ status: claim.status }, 'cell not started: run is no longer waiting for a worker');
      return;
    }
    const started = Date.now();
    const result = await this.execute(job, log);
    await this.runs.finish(ref, job.runId, {
      epoch: FIRST_EPOCH,
      type: result.status === 'completed' ? 'run.completed' : 'run.failed',
      result,
      replyTo: job.replyTo,
    });
    log.info({ status: result.status, code: result.status === 'failed' ? result.code : undefined, durationMs: Date.now() - started }, 'cell finished');
  }

  private async execute(job: CellJob, log: Logger): Promise<CodeModeResult> {
    const { spec } = job;
    let outcome: CellOutcome;
    try {
      outcome = await this.pool.run({ runId: job.runId, code: spec.code, limits: spec.limits });
    } catch (error) {
      log.error({ err: error }, 'sandbox failed to run the cell');
      outcome = {
        status: 'failed',
        error: 'code mode sandbox failed to run the cell; the failure was logged.',
        code: 'internal_error',
        phase: 'host',
        output: [],
        consoleTruncated: false,
        bridgeDispatchStarted: false,
      };
    }
    const { result } = await buildCellResult({
      outcome,
      limits: spec.limits,
      restartSafe: spec.restartSafe,
      telemetry: emptyTelemetry(),
      priorOutputBytes: 0,
    });
    return result;
  }
}
