import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { CellJobSchema, QUEUES } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueProcessor, type ConsumerOptions } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { CellRunner } from '../runs/cell-runner.service';

/** Consumer of the shared `cells` queue: one job per new cell, as many at once as sandbox threads. */
@Injectable()
export class CellsProcessor extends QueueProcessor {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly runner: CellRunner,
    private readonly metrics: WorkerMetrics,
  ) {
    super(config, logger);
  }

  protected consumerOptions(): ConsumerOptions {
    // A job re-delivered after a stall finds its run no longer `requested` and is dropped.
    return { queue: QUEUES.cells, role: 'cells', concurrency: this.config.sandboxThreads, maxStalledCount: 1 };
  }

  protected handle(job: Job): Promise<void> {
    this.metrics.jobClaimed('cells', job.timestamp, job.processedOn);
    return this.runner.run(CellJobSchema.parse(job.data));
  }
}
