import { Queue } from 'bullmq';
import type { KeySpace, RedisClient } from '@codemode/events';
import type { WorkerPresence } from '@codemode/fleet';
import { JOB_NAMES, workerQueueName, type AbortJob, type ResumeJob, type ShellJob, type ToolResultsJob } from '@codemode/contracts';
import { queueOptions } from './queue-options';

/** Most workers an API instance keeps a queue handle for; older handles are closed and reopened on demand. */
const MAX_HANDLES = 256;

/**
 * Producer side of every worker's own queue (sticky routing): a `wait` or abort goes to the
 * worker that holds the run in memory.
 *
 * A queue whose worker is gone is removed by the other workers (apps/worker lifecycle,
 * WorkerQueueJanitor) a grace after the worker's last beat; a job routed to it meanwhile or later
 * re-registers the queue (`presence.queued`, after the add), so it is removed in turn. Such a job
 * is never taken, whether or not its queue still exists: its caller is answered by its own
 * deadline, as for any dead worker (wait: start overdue; abort: ended from the API; tool results:
 * 409; shell: "No worker answered").
 */
export class WorkerQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: KeySpace,
    private readonly presence: WorkerPresence,
  ) {}

  async resume(workerId: string, job: ResumeJob): Promise<string> {
    const jobId = `resume-${job.token}`;
    await this.queue(workerId).add(JOB_NAMES.resumeRun, job, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 });
    await this.registered(workerId);
    return jobId;
  }

  /** A resume job for this reservation token is still queued or running at the worker. */
  async hasResumeJob(workerId: string, token: string): Promise<boolean> {
    return (await this.queue(workerId).getJob(`resume-${token}`)) !== undefined;
  }

  async abort(workerId: string, job: AbortJob): Promise<void> {
    await this.queue(workerId).add(JOB_NAMES.abortRun, job, { removeOnComplete: true, removeOnFail: true, attempts: 1 });
    await this.registered(workerId);
  }

  async shell(workerId: string, job: ShellJob): Promise<void> {
    await this.queue(workerId).add(JOB_NAMES.shell, job, { removeOnComplete: true, removeOnFail: true, attempts: 1 });
    await this.registered(workerId);
  }

  /** Queues platform answers for the worker holding the run; answers the job id (see `withdraw`). */
  async toolResults(workerId: string, job: ToolResultsJob): Promise<string> {
    const jobId = `tool-results-${job.requestId}`;
    await this.queue(workerId).add(JOB_NAMES.toolResults, job, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 });
    await this.registered(workerId);
    return jobId;
  }

  /** Takes back a job the worker has not started; false when it is already active or gone. */
  async withdraw(workerId: string, jobId: string): Promise<boolean> {
    const removed = await this.queue(workerId)
      .remove(jobId)
      .catch(() => 0);
    return removed === 1;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    this.queues.clear();
  }

  /** Keeps the queue in the worker registry, so it is removed once its worker is gone. Best effort: the job is queued. */
  private async registered(workerId: string): Promise<void> {
    await this.presence.queued(workerId).catch(() => undefined);
  }

  private queue(workerId: string): Queue {
    let queue = this.queues.get(workerId);
    if (queue) {
      // Map order is insertion order: re-insert to mark it recently used.
      this.queues.delete(workerId);
      this.queues.set(workerId, queue);
      return queue;
    }
    const name = workerQueueName(workerId);
    queue = new Queue(name, queueOptions(this.connection, this.keys, name));
    this.queues.set(workerId, queue);
    if (this.queues.size > MAX_HANDLES) {
      const [oldestId, oldest] = this.queues.entries().next().value as [string, Queue];
      this.queues.delete(oldestId);
      void oldest.close().catch(() => undefined);
    }
    return queue;
  }
}
