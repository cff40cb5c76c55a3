import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { QUEUES, ShellJobSchema } from '@codemode/contracts';
import { createRedis } from '@codemode/events';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ShellHost } from './shell-host.service';

/** Shell requests wait on processes, not CPU: many can be in flight. */
const CONCURRENCY = 64;

/** Consumer of the shared `shell` queue: shell work of scopes that have no live home worker. */
@Injectable()
export class ShellProcessor implements OnApplicationBootstrap {
  private worker: Worker | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly shell: ShellHost,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new Worker(QUEUES.shell, (job: Job) => this.handle(job), {
      connection: createRedis(this.config.redisUrl, {
        name: `worker-${this.config.workerId}-shell`,
        blocking: true,
        onError: (error) => this.logger.warn({ err: error.message }, 'Redis connection error (shell consumer); retrying'),
      }),
      prefix: `{${this.config.keyPrefix}}`,
      concurrency: CONCURRENCY,
      maxStalledCount: 0,
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'shell queue consumer error'));
  }

  private handle(job: Job): Promise<void> {
    this.metrics.jobClaimed('shell', job.timestamp, job.processedOn);
    return this.shell.handle(ShellJobSchema.parse(job.data));
  }

  get running(): boolean {
    return this.worker?.isRunning() ?? false;
  }

  /** Takes no new shell requests and waits for those in progress. */
  async close(): Promise<void> {
    await this.worker?.close();
  }
}
