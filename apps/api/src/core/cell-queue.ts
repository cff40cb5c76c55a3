import { Queue } from 'bullmq';
import { JOB_NAMES, type CellJob, type ReplayJob } from '@codemode/contracts';
import { readQueueStats, type QueueStats } from './queue-stats';

/** BullMQ's lowest priority. */
const MAX_PRIORITY = 2_097_152;

/**
 * Producer side of the shared `cells` queue: new cells, and replays of parked replay-safe runs
 * whose owner is gone (any worker may rebuild them; resumes of held runs go to their owner).
 */
export class CellQueue {
  constructor(private readonly queue: Queue) {}

  /**
   * `rank`: how many calls the cell's tenant has in flight, this one included. BullMQ serves lower
   * priorities first, so a tenant with one call in flight goes ahead of one flooding the queue
   * (SPEC §10 fairness); within a rank, first come first served.
   */
  async add(job: CellJob, rank = 1): Promise<void> {
    // The job id is the run id: a run is enqueued at most once, and can be removed by id.
    await this.queue.add(JOB_NAMES.runCell, job, {
      jobId: job.runId,
      priority: Math.min(Math.max(1, rank), MAX_PRIORITY),
      removeOnComplete: true,
      removeOnFail: true,
      attempts: 1,
    });
  }

  /** Returns the job id, so a wait that gives up can withdraw it. */
  async replay(job: ReplayJob): Promise<string> {
    const jobId = `replay-${job.resume?.token ?? job.runId}`;
    await this.queue.add(JOB_NAMES.replayRun, job, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 });
    return jobId;
  }

  /** A replay job for this reservation token is still queued or running. */
  async hasReplayJob(token: string): Promise<boolean> {
    return (await this.queue.getJob(`replay-${token}`)) !== undefined;
  }

  /** Takes back a job no worker has started; best effort. */
  async withdraw(jobId: string): Promise<void> {
    await this.queue.remove(jobId).catch(() => 0);
  }

  /** Best effort: the run's ledger state, not the queue, decides whether a cell may start. */
  async remove(runId: string): Promise<void> {
    await this.queue.remove(runId).catch(() => 0);
  }

  /** Depth and oldest waiting job, for the queue gauges. */
  stats(): Promise<QueueStats> {
    return readQueueStats(this.queue);
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
