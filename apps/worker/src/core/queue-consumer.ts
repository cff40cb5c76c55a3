import { Worker, type Job } from 'bullmq';
import type { AppConfig } from '@codemode/config';
import { createRedis, KeySpace } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';

/** How one of the worker's queue consumers runs. */
export interface ConsumerOptions {
  queue: string;
  /** Short name for its Redis connection and its log lines. */
  role: string;
  concurrency: number;
  /** How often BullMQ may re-deliver a job whose worker stalled (a new cell must never run twice blindly). */
  maxStalledCount: number;
}

/**
 * A BullMQ consumer on its own blocking connection (BullMQ needs `maxRetriesPerRequest: null`),
 * under the deployment's key prefix, with its errors logged rather than thrown.
 */
export class QueueConsumer {
  private readonly worker: Worker;

  constructor(config: AppConfig, logger: Logger, options: ConsumerOptions, handle: (job: Job, token?: string) => Promise<void>) {
    this.worker = new Worker(options.queue, handle, {
      connection: createRedis(config.redis, {
        name: `worker-${config.workerId}-${options.role}`,
        blocking: true,
        onError: (error) => logger.warn({ err: error.message, consumer: options.role }, 'Redis connection error; retrying'),
      }),
      prefix: new KeySpace(config.keyPrefix).queuePrefix,
      concurrency: options.concurrency,
      maxStalledCount: options.maxStalledCount,
      // A job's lock is the worker's lease (SPEC §6): renewed from this main thread every half of
      // it; a dead worker's job is re-delivered about one lease after it stopped renewing.
      lockDuration: config.presenceTtlMs,
      stalledInterval: Math.max(500, Math.floor(config.presenceTtlMs / 2)),
    });
    this.worker.on('error', (error) => logger.warn({ err: error, consumer: options.role }, 'queue consumer error'));
    this.worker.on('failed', (job, error) =>
      logger.error({ err: error, consumer: options.role, job: job?.name, jobId: job?.id }, 'queue job failed; its run may need recovery'),
    );
  }

  get running(): boolean {
    return this.worker.isRunning();
  }

  /** Takes no new jobs and waits for running ones to finish (within their budget). */
  close(): Promise<void> {
    return this.worker.close();
  }
}

/**
 * Base of the worker's queue processors: starts its consumer once the app is up, and exposes
 * whether it runs (readiness) and how to stop it (shutdown). Subclasses say which queue and how
 * to handle a job.
 */
export abstract class QueueProcessor {
  private consumer: QueueConsumer | undefined;

  protected constructor(
    protected readonly config: AppConfig,
    protected readonly logger: Logger,
  ) {}

  protected abstract consumerOptions(): ConsumerOptions;
  /** `token` is the job's lock token (for moving it to delayed). */
  protected abstract handle(job: Job, token?: string): Promise<void>;

  onApplicationBootstrap(): void {
    this.consumer = new QueueConsumer(this.config, this.logger, this.consumerOptions(), (job, token) => this.handle(job, token));
  }

  get running(): boolean {
    return this.consumer?.running ?? false;
  }

  /** Takes no new jobs and waits for running ones to finish (within their budget). */
  async close(): Promise<void> {
    await this.consumer?.close();
  }
}
