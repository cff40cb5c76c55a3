import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { AbortJobSchema, JOB_NAMES, ResumeJobSchema, ShellJobSchema, ToolResultsJobSchema, workerQueueName } from '@codemode/contracts';
import { createRedis } from '@codemode/events';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ResumeRunner } from '../runs/resume-runner.service';
import { ShellHost } from '../shell/shell-host.service';

/** Parked runs waiting at once can all be resumed at once; the sandbox pool bounds the CPU work. */
const CONCURRENCY = 128;

/** Consumer of this worker's own queue: waits and aborts of its parked runs, and shell work of the scopes it serves. */
@Injectable()
export class ResumesProcessor implements OnApplicationBootstrap {
  private worker: Worker | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runner: ResumeRunner,
    private readonly shell: ShellHost,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new Worker(workerQueueName(this.config.workerId), (job: Job) => this.handle(job), {
      connection: createRedis(this.config.redisUrl, {
        name: `worker-${this.config.workerId}-own`,
        blocking: true,
        onError: (error) => this.logger.warn({ err: error.message }, 'Redis connection error (own queue); retrying'),
      }),
      prefix: `{${this.config.keyPrefix}}`,
      concurrency: CONCURRENCY,
      maxStalledCount: 0,
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'own queue consumer error'));
  }

  get running(): boolean {
    return this.worker?.isRunning() ?? false;
  }

  /** Takes no new jobs and waits for running ones to finish (within their budget). */
  async close(): Promise<void> {
    await this.worker?.close();
  }

  private handle(job: Job): Promise<void> {
    // Labelled `worker`, not by the queue's name: that name carries the worker id.
    this.metrics.jobClaimed('worker', job.timestamp, job.processedOn);
    if (job.name === JOB_NAMES.resumeRun) return this.runner.resume(ResumeJobSchema.parse(job.data));
    if (job.name === JOB_NAMES.abortRun) return this.runner.abort(AbortJobSchema.parse(job.data));
    if (job.name === JOB_NAMES.shell) return this.shell.handle(ShellJobSchema.parse(job.data));
    if (job.name === JOB_NAMES.toolResults) return this.runner.toolResults(ToolResultsJobSchema.parse(job.data));
    this.logger.warn({ name: job.name }, 'unknown job on own queue; dropped');
    return Promise.resolve();
  }
}
