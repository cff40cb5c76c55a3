import { Queue } from 'bullmq';
import { JOB_NAMES, QUEUES, type CellJob } from '@codemode/contracts';
import { readQueueStats, type QueueStats } from './queue-stats';

/** Producer side of the shared `cells` queue: new cells only (resumes go to their owner). */
export class CellQueue {
  constructor(private readonly queue: Queue) {}

  async add(job: CellJob): Promise<void> {
    // The job id is the run id: a run is enqueued at most once, and can be removed by id.
    await this.queue.add(JOB_NAMES.runCell, job, {
      jobId: job.runId,
      removeOnComplete: true,
      removeOnFail: true,
      attempts: 1,
    });
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

  static queueName(): string {
    return QUEUES.cells;
  }
}
