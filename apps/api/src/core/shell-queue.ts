import { Queue } from 'bullmq';
import { JOB_NAMES, type ShellJob } from '@codemode/contracts';

/** Producer side of the shared `shell` queue: shell work for a scope that has no live home worker. */
export class ShellQueue {
  constructor(private readonly queue: Queue) {}

  async add(job: ShellJob): Promise<void> {
    await this.queue.add(JOB_NAMES.shell, job, { removeOnComplete: true, removeOnFail: true, attempts: 1 });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
