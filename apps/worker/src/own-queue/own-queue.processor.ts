import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import {
  AbortJobSchema,
  JOB_NAMES,
  ResumeJobSchema,
  type ResumeJob,
  ShellJobSchema,
  ToolResultsJobSchema,
  workerQueueName,
} from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { QueueProcessor, type ConsumerOptions } from '../core/queue-consumer';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunRecovery } from '../recovery/run-recovery.service';
import { HeldRunJobs } from '../runs/held-run-jobs.service';
import { ShellCalls } from '../shell/shell-calls.service';

/** Parked runs waiting at once can all be resumed at once; the sandbox pool bounds the CPU work. */
const CONCURRENCY = 128;

/**
 * Consumer of this worker's own queue: waits and aborts of its parked runs, tool results, and
 * shell work of the scopes it serves. No job here holds a long wait (SPEC §10 fate isolation): a
 * shell call only starts here (ShellCalls runs it detached, bounded per tenant), so one tenant's
 * waiting polls and node calls never fill this concurrency ahead of another's resumes.
 */
@Injectable()
export class OwnQueueProcessor extends QueueProcessor {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly heldRuns: HeldRunJobs,
    private readonly recovery: RunRecovery,
    private readonly shellCalls: ShellCalls,
    private readonly metrics: WorkerMetrics,
  ) {
    super(config, logger);
  }

  protected consumerOptions(): ConsumerOptions {
    return { queues: [workerQueueName(this.config.workerId)], role: 'own', concurrency: CONCURRENCY, maxStalledCount: 0 };
  }

  protected handle(job: Job): Promise<void> {
    // Labelled `worker`, not by the queue's name: that name carries the worker id.
    this.metrics.jobClaimed('worker', job.timestamp, job.processedOn);
    if (job.name === JOB_NAMES.resumeRun) return this.resume(ResumeJobSchema.parse(job.data));
    if (job.name === JOB_NAMES.abortRun) return this.heldRuns.abort(AbortJobSchema.parse(job.data));
    if (job.name === JOB_NAMES.shell) return this.shellCalls.take(ShellJobSchema.parse(job.data));
    if (job.name === JOB_NAMES.toolResults) return this.heldRuns.toolResults(ToolResultsJobSchema.parse(job.data));
    this.logger.warn({ name: job.name }, 'unknown job on own queue; dropped');
    return Promise.resolve();
  }

  /** A wait routed here for a run whose VM this worker no longer holds goes to recovery. */
  private async resume(job: ResumeJob): Promise<void> {
    if (await this.heldRuns.resume(job)) return;
    await this.recovery.resumeNotHeld(job);
  }
}
