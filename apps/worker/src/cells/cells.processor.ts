import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import { cellQueueName, CellJobSchema, JOB_NAMES, ReplayJobSchema } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueProcessor, type ConsumerOptions, type Detached } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunRecovery } from '../recovery/run-recovery.service';
import { CellWork, type CellOutcome } from './cell-work';

/**
 * Consumer of every shard of the cell queue: one job per new cell (unless they travel on the
 * shard streams, CellStreamReaders) or replay, `cellConcurrency` at once over all shards. A job
 * whose leg waits only on the host gives its slot back (IdleLegs decides when) and stays locked
 * until the leg ends (SPEC §10 fate isolation).
 */
@Injectable()
export class CellsProcessor extends QueueProcessor {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly cells: CellWork,
    private readonly recovery: RunRecovery,
    private readonly metrics: WorkerMetrics,
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
      return this.cells.goOn(replay, this.recovery.replay(replay));
    }
    const cell = CellJobSchema.parse(job.data);
    return this.cells.goOn(
      cell,
      this.cells.runCell(cell).then((outcome) => this.lookAgainLater(outcome, job, token)),
    );
  }

  /** A run whose owner's lease has not lapsed yet: its job comes back in half a lease. */
  private async lookAgainLater(outcome: CellOutcome, job: Job, token: string | undefined): Promise<void> {
    if (outcome === 'done') return;
    await job.moveToDelayed(Date.now() + this.cells.lookAgainMs, token);
    throw new DelayedError();
  }
}
