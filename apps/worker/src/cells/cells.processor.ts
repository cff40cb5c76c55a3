import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bullmq';
import { CellJobSchema, QUEUES } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueConsumer } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { CellRunner } from '../runs/cell-runner.service';

/** Consumer of the shared `cells` queue: one job per new cell, as many at once as sandbox threads. */
@Injectable()
export class CellsProcessor implements OnApplicationBootstrap {
  private consumer: QueueConsumer | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runner: CellRunner,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.consumer = new QueueConsumer(
      this.config,
      this.logger,
      // A job re-delivered after a stall finds its run no longer `requested` and is dropped.
      { queue: QUEUES.cells, role: 'cells', concurrency: this.config.sandboxThreads, maxStalledCount: 1 },
      (job) => this.handle(job),
    );
  }

  private handle(job: Job): Promise<void> {
    this.metrics.jobClaimed('cells', job.timestamp, job.processedOn);
    return this.runner.run(CellJobSchema.parse(job.data));
  }

  get running(): boolean {
    return this.consumer?.running ?? false;
  }

  /** Takes no new jobs and waits for running ones to finish (within their budget). */
  async close(): Promise<void> {
    await this.consumer?.close();
  }
}
