import { Inject, Injectable } from '@nestjs/common';
import type { CellJob, CellSpec } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { RunLedger } from '@codemode/events';
import { SandboxPool, type CellOutcome } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunOutcomes, type RunContext } from './run-outcomes.service';
import { hostFailureOutcome, keepResuming } from './run-loop';
import type { RunToolHost } from '../tools/run-tool-host';
import { ToolHosts } from '../tools/tool-hosts.service';

/** Until leases and fencing arrive every run is owned at epoch 1. */
export const FIRST_EPOCH = 1;

/** Runs one queued cell: claim it in the ledger, run it in the sandbox, record and push its answer. */
@Injectable()
export class CellRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly pool: SandboxPool,
    private readonly outcomes: RunOutcomes,
    private readonly toolHosts: ToolHosts,
  ) {}

  async run(job: CellJob): Promise<void> {
    const ref = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    const claim = await this.runs.start(ref, job.runId, { workerId: this.config.workerId, epoch: FIRST_EPOCH, replyTo: job.replyTo });
    if (!claim.started) {
      // Abandoned by the API (not started within its budget) or already handled: never run it.
      log.info({ status: claim.status }, 'cell not started: run is no longer waiting for a worker');
      return;
    }
    const started = Date.now();
    const host = await this.toolHosts.create(ref, job.runId, FIRST_EPOCH, job.spec);
    const outcome = await this.execute(job.runId, job.spec, host, log);
    const ctx: RunContext = {
      host,
      ref,
      runId: job.runId,
      epoch: FIRST_EPOCH,
      limits: job.spec.limits,
      restartSafe: job.spec.restartSafe,
      awaitResults: job.spec.awaitResults,
      priorOutputBytes: 0,
    };
    const result = await this.outcomes.record(ctx, outcome, job.replyTo, started);
    log.info({ status: result.status, code: result.status === 'failed' ? result.code : undefined, durationMs: Date.now() - started }, 'cell answered');
  }

  private async execute(runId: string, spec: CellSpec, host: RunToolHost, log: Logger): Promise<CellOutcome> {
    try {
      host.beginLeg(spec.limits.timeoutMs);
      const request = { runId, code: spec.code, limits: spec.limits, awaitResults: spec.awaitResults, restartSafe: spec.restartSafe, catalog: host.catalog.guestCatalog() };
      const first = await this.pool.run(request, host);
      return spec.awaitResults ? await keepResuming(this.pool, runId, spec.limits, first, host) : first;
    } catch (error) {
      log.error({ err: error }, 'sandbox failed to run the cell');
      return hostFailureOutcome();
    }
  }
}
