import { DelayedError, Worker, type Job } from 'bullmq';
import type { AppConfig } from '@codemode/config';
import { createRedis, KeySpace, redisFailureLog } from '@codemode/events';
import { DetachedJobs } from './detached-jobs';
import { SharedConcurrency } from './shared-concurrency';
import type { Logger } from '@codemode/telemetry';

/** How one of the worker's queue consumers runs. */
export interface ConsumerOptions {
  /** The queues it consumes (the cell queue's shards, or one queue), sharing one `concurrency`. */
  queues: readonly string[];
  /** Short name for its Redis connection and its log lines. */
  role: string;
  concurrency: number;
  /** How often BullMQ may re-deliver a job whose worker stalled (a new cell must never run twice blindly). */
  maxStalledCount: number;
}

/**
 * What a handler answers when its work goes on without the consumer's slot (SPEC §10 fate
 * isolation): the job stays active and locked (DetachedJobs) until `goesOn` settles.
 */
export interface Detached {
  goesOn: Promise<void>;
}

/** Handles one job; answers `Detached` to let the job go while its work goes on. */
export type JobHandler = (job: Job, token?: string) => Promise<void | Detached>;

/**
 * How long a consumer waits to fetch again after losing its connection (BullMQ's default is
 * 15 s): a failed-over Cluster primary is back in seconds, and SPEC §13 wants new execs served
 * within 15 s of it. Once a second per queue is no busy loop.
 */
const FETCH_RETRY_DELAY_MS = 1_000;

/**
 * BullMQ consumers, one per queue, on one connection of their own (BullMQ needs
 * `maxRetriesPerRequest: null`; each Worker adds its blocking duplicate), under each queue's
 * hash-tagged prefix, with their errors logged rather than thrown. Their queues share one
 * concurrency budget (SharedConcurrency).
 */
export class QueueConsumer {
  private readonly workers: Worker[];
  private readonly detached: DetachedJobs;
  private readonly connection: ReturnType<typeof createRedis>;

  constructor(config: AppConfig, logger: Logger, options: ConsumerOptions, handle: JobHandler) {
    const keys = new KeySpace(config.keyPrefix);
    this.connection = createRedis(config.redis, {
      name: `worker-${config.workerId}-${options.role}`,
      blocking: true,
      onError: (error) => logger.warn({ err: error.message, consumer: options.role }, 'Redis connection error; retrying'),
    });
    const shared = new SharedConcurrency(options.concurrency, options.queues.length);
    this.detached = new DetachedJobs(config.presenceTtlMs, logger, options.role);
    const run = async (job: Job, token: string | undefined): Promise<void> => {
      const answer = await handle(job, token);
      if (!answer) return;
      if (token === undefined) return answer.goesOn;
      this.detached.hold(job, token, answer.goesOn);
      // The job stays active (DelayedError tells BullMQ it was moved elsewhere): its slot frees.
      throw new DelayedError();
    };
    // One line a second per cause over every consumer of the process (SPEC §13: no log storms).
    const logError = (error: Error) => {
      const admitted = redisFailureLog.admit(error);
      if (admitted) logger.warn({ err: error, consumer: options.role, ...admitted }, 'queue consumer error');
    };
    this.workers = options.queues.map((queue, index) => {
      const worker = new Worker(queue, (job, token) => shared.around(index, () => run(job, token)), {
        connection: this.connection,
        prefix: keys.queuePrefix(queue),
        concurrency: shared.limit(index),
        maxStalledCount: options.maxStalledCount,
        runRetryDelay: FETCH_RETRY_DELAY_MS,
        // A job's lock is the worker's lease (SPEC §6): renewed from this main thread every half of
        // it; a dead worker's job is re-delivered about one lease after it stopped renewing.
        lockDuration: config.presenceTtlMs,
        stalledInterval: Math.max(500, Math.floor(config.presenceTtlMs / 2)),
      });
      worker.on('error', logError);
      worker.on('failed', (job, error) =>
        logger.error({ err: error, consumer: options.role, job: job?.name, jobId: job?.id }, 'queue job failed; its run may need recovery'),
      );
      return worker;
    });
    shared.onChange((index, limit) => {
      this.workers[index].concurrency = limit;
    });
  }

  get running(): boolean {
    return this.workers.every((worker) => worker.isRunning());
  }

  /** Takes no new jobs and waits for running ones, detached ones included, to finish (within their budget). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
    await this.detached.drain();
    this.connection.disconnect();
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
  protected abstract handle(job: Job, token?: string): Promise<void | Detached>;

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
