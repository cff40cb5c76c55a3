import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import { cellQueueName, CellJobSchema, JOB_NAMES, ReplayJobSchema, type CellJob } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { withLogContext, WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueProcessor, type ConsumerOptions, type Detached } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunRecovery } from '../recovery/run-recovery.service';
import { CellRunner } from '../runs/cell-runner.service';
import { IdleLegs } from './idle-legs';

/**
 * Consumer of every shard of the cell queue: one job per new cell or replay, `cellConcurrency` at
 * once over all shards. A job whose leg waits only on the host gives its slot back (IdleLegs
 * decides when) and stays locked until the leg ends (SPEC §10 fate isolation).
 */
@Injectable()
export class CellsProcessor extends QueueProcessor {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly runner: CellRunner,
    private readonly recovery: RunRecovery,
    private readonly metrics: WorkerMetrics,
    private readonly idleLegs: IdleLegs,
  ) {
    super(config, logger);
  }

  protected consumerOptions(): ConsumerOptions {
    // A job re-delivered after a stall finds its run `running`: recovery decides (see RunRecovery),
    // fenced by the run's epoch, so a second re-delivery (its recovering worker died too) is safe.
    const queues = Array.from({ length: this.config.redis.queueShards }, (_, shard) => cellQueueName(shard));
    return { queues, role: 'cells', concurrency: this.config.cellConcurrency, maxStalledCount: 2 };
  }

  protected async handle(job: Job, token?: string): Promise<void | Detached> {
    this.metrics.jobClaimed('cells', job.timestamp, job.processedOn);
    if (job.name === JOB_NAMES.replayRun) {
      const replay = ReplayJobSchema.parse(job.data);
      return this.goOn(replay, this.recovery.replay(replay));
    }
    const cell = CellJobSchema.parse(job.data);
    // SPEC §19: the worker's lines of this run carry the id of the request that asked for it.
    const work =
      cell.requestId === undefined
        ? this.runCell(cell, job, token)
        : withLogContext({ requestId: cell.requestId }, () => this.runCell(cell, job, token));
    return this.goOn(cell, work);
  }

  /** The job's work, done here, or let go on without the job's slot once its leg waits only on the host. */
  private async goOn(run: { tenant: string; runId: string }, work: Promise<void>): Promise<void | Detached> {
    if (await this.idleLegs.untilIdle(run.runId, run.tenant, work)) return { goesOn: work };
    await work;
  }

  private async runCell(cell: CellJob, job: Job, token: string | undefined): Promise<void> {
    const claim = await this.runner.run(cell);
    // Already running: this job was re-delivered after its worker stalled (SPEC §6 recovery).
    if (claim.started || claim.status !== 'running' || (await this.recovery.recoverStalled(cell))) return;
    // Its owner's lease has not lapsed yet (the job lock can lapse first): look again later.
    await job.moveToDelayed(Date.now() + Math.ceil(this.config.presenceTtlMs / 2), token);
    throw new DelayedError();
  }
}
