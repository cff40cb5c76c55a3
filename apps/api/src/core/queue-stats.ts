import type { Queue } from 'bullmq';
import { QUEUE_JOB_STATES, type QueueJobState } from '@codemode/telemetry';

/** A queue's job counts by state and when its oldest waiting job was enqueued (epoch ms). */
export interface QueueStats {
  counts: Record<QueueJobState, number>;
  oldestWaitingAt: number | null;
}

/** Two round trips: the counts, and the oldest job of the wait list (ascending order = oldest first). */
export async function readQueueStats(queue: Queue): Promise<QueueStats> {
  const [counts, oldest] = await Promise.all([queue.getJobCounts(...QUEUE_JOB_STATES), queue.getJobs(['wait'], 0, 0, true)]);
  return { counts: counts as Record<QueueJobState, number>, oldestWaitingAt: oldest[0]?.timestamp ?? null };
}
