import { Queue } from 'bullmq';
import { JOB_NAMES, type ShellJob } from '@codemode/contracts';
import { readQueueStats, type QueueStats } from './queue-stats';

/** Producer side of the shared `shell` queue: shell work for a scope that has no live home worker. */
export class ShellQueue {
  constructor(private readonly queue: Queue) {}

  async add(job: ShellJob): Promise<void> {
    await this.queue.add(JOB_NAMES.shell, job, { removeOnComplete: true, removeOnFail: true, attempts: 1 });
  }

  /** Depth and oldest waiting job, for the queue gauges. */
  stats(): Promise<QueueStats> {
    return readQueueStats(this.queue);
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
