import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { QUEUES, ShellJobSchema } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueProcessor, type ConsumerOptions } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ShellCalls } from './shell-calls.service';

/** A job only starts its call (ShellCalls runs it detached): this bounds how fast the queue is taken, not the calls. */
const CONCURRENCY = 64;

/** Consumer of the shared `shell` queue: shell work of scopes that have no live home worker. */
@Injectable()
export class ShellProcessor extends QueueProcessor {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly calls: ShellCalls,
    private readonly metrics: WorkerMetrics,
  ) {
    super(config, logger);
  }

  protected consumerOptions(): ConsumerOptions {
    return { queues: [QUEUES.shell], role: 'shell', concurrency: CONCURRENCY, maxStalledCount: 0 };
  }

  protected handle(job: Job): Promise<void> {
    this.metrics.jobClaimed('shell', job.timestamp, job.processedOn);
    return this.calls.take(ShellJobSchema.parse(job.data));
  }
}
