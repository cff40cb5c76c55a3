import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/** The baseline: a naive BullMQ round trip (`add` + `waitUntilFinished`) to an echo worker. */
export class BullmqEcho {
  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly worker: Worker,
    private readonly connections: Redis[],
  ) {}

  static async start(redisUrl: string, prefix: string, concurrency: number): Promise<BullmqEcho> {
    const connection = (): Redis => new Redis(redisUrl, { maxRetriesPerRequest: null });
    const connections = [connection(), connection(), connection()];
    const queue = new Queue('echo', { connection: connections[0], prefix });
    const events = new QueueEvents('echo', { connection: connections[1], prefix });
    const worker = new Worker('echo', async (job) => job.data as unknown, { connection: connections[2], prefix, concurrency });
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker.waitUntilReady()]);
    return new BullmqEcho(queue, events, worker, connections);
  }

  async roundTrip(): Promise<unknown> {
    // Completed jobs are kept a while: waitUntilFinished reads the job after it finishes. The count
    // is above a whole bench's round trips, so no measured round also pays BullMQ's trimming.
    const job = await this.queue.add('echo', { value: 2 }, { removeOnComplete: { count: 100_000 }, removeOnFail: true });
    return job.waitUntilFinished(this.events, 30_000);
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.events.close();
    await this.queue.obliterate({ force: true }).catch(() => undefined);
    await this.queue.close();
    for (const c of this.connections) c.disconnect();
  }
}
