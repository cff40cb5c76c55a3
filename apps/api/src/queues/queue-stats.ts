import type { Queue } from 'bullmq';
import { QUEUE_JOB_STATES, type QueueJobState } from '@codemode/telemetry';

/** A queue's job counts by state and when its oldest waiting job was enqueued (epoch ms). */
export interface QueueStats {
  counts: Record<QueueJobState, number>;
  oldestWaitingAt: number | null;
}

/**
 * Prioritized jobs read for the oldest one. Cells are added with a priority (the tenant's rank,
 * for fairness), so they wait in BullMQ's prioritized set, ordered by priority, not age: the
 * oldest is found among the first PRIORITIZED_SCAN, which bounds the cost of a scrape.
 */
const PRIORITIZED_SCAN = 100;

/** The counts, the oldest of the wait list and the head of the prioritized set, read together. */
export async function readQueueStats(queue: Queue): Promise<QueueStats> {
  const [counts, waiting, prioritized] = await Promise.all([
    queue.getJobCounts(...QUEUE_JOB_STATES),
    queue.getJobs(['wait'], 0, 0, true),
    queue.getJobs(['prioritized'], 0, PRIORITIZED_SCAN - 1, true),
  ]);
  const times = [...waiting, ...prioritized].map((job) => job.timestamp);
  return { counts: counts as Record<QueueJobState, number>, oldestWaitingAt: times.length > 0 ? Math.min(...times) : null };
}
