import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bullmq';
import { QUEUES, ShellJobSchema } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueConsumer } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ShellHost } from './shell-host.service';

/** Shell requests wait on processes, not CPU: many can be in flight. */
const CONCURRENCY = 64;

/** Consumer of the shared `shell` queue: shell work of scopes that have no live home worker. */
@Injectable()
export class ShellProcessor implements OnApplicationBootstrap {
  private consumer: QueueConsumer | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly shell: ShellHost,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.consumer = new QueueConsumer(
      this.config,
      this.logger,
      { queue: QUEUES.shell, role: 'shell', concurrency: CONCURRENCY, maxStalledCount: 0 },
      (job) => this.handle(job),
    );
  }

  private handle(job: Job): Promise<void> {
    this.metrics.jobClaimed('shell', job.timestamp, job.processedOn);
    return this.shell.handle(ShellJobSchema.parse(job.data));
  }

  get running(): boolean {
    return this.consumer?.running ?? false;
  }

  /** Takes no new shell requests and waits for those in progress. */
  async close(): Promise<void> {
    await this.consumer?.close();
  }
}
