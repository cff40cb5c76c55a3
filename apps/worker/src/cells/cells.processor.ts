import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { CellJobSchema, QUEUES } from '@codemode/contracts';
import { createRedis } from '@codemode/events';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { CellRunner } from '../runs/cell-runner.service';

/** Consumer of the shared `cells` queue: one job per new cell, as many at once as sandbox threads. */
@Injectable()
export class CellsProcessor implements OnApplicationBootstrap {
  private worker: Worker | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runner: CellRunner,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new Worker(QUEUES.cells, (job: Job) => this.handle(job), {
      connection: createRedis(this.config.redisUrl, {
        name: `worker-${this.config.workerId}-cells`,
        blocking: true,
        onError: (error) => this.logger.warn({ err: error.message }, 'Redis connection error (cells consumer); retrying'),
      }),
      prefix: `{${this.config.keyPrefix}}`,
      concurrency: this.config.sandboxThreads,
      // A job re-delivered after a stall finds its run no longer `requested` and is dropped.
      maxStalledCount: 1,
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'cells queue consumer error'));
  }

  private handle(job: Job): Promise<void> {
    this.metrics.jobClaimed('cells', job.timestamp, job.processedOn);
    return this.runner.run(CellJobSchema.parse(job.data));
  }

  get running(): boolean {
    return this.worker?.isRunning() ?? false;
  }

  /** Takes no new jobs and waits for running ones to finish (within their budget). */
  async close(): Promise<void> {
    await this.worker?.close();
  }
}
