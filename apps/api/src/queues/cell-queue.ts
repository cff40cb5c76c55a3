import { Queue } from 'bullmq';
import { cellQueueName, cellQueueShard, JOB_NAMES, type CellJob, type ReplayJob, type SessionRef } from '@codemode/contracts';
import type { KeySpace, RedisClient } from '@codemode/events';
import { queueOptions } from './queue-options';
import { readQueueStats, type QueueStats } from './queue-stats';

/** BullMQ's lowest priority. */
const MAX_PRIORITY = 2_097_152;

/**
 * Producer side of the sharded cell queue (SPEC §13): new cells, and replays of parked
 * replay-safe runs whose owner is gone (any worker may rebuild them; resumes of held runs go to
 * their owner). A session's jobs all go to its shard, so every call about one run finds its job
 * in one queue, and on a Redis Cluster the shards spread over the primaries.
 */
export class CellQueue {
  private constructor(private readonly shards: readonly Queue[]) {}

  static open(connection: RedisClient, keys: KeySpace, shards: number): CellQueue {
    return new CellQueue(
      Array.from({ length: shards }, (_, shard) => {
        const name = cellQueueName(shard);
        return new Queue(name, queueOptions(connection, keys, name));
      }),
    );
  }

  /**
   * `rank`: how many calls the cell's tenant has in flight, this one included. BullMQ serves lower
   * priorities first, so a tenant with one call in flight goes ahead of one flooding the queue
   * (SPEC §10 fairness); within a rank, first come first served.
   */
  async add(job: CellJob, rank = 1): Promise<void> {
    // The job id is the run id: a run is enqueued at most once, and can be removed by id.
    await this.shardOf(job).add(JOB_NAMES.runCell, job, {
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
    await this.shardOf(job).add(JOB_NAMES.replayRun, job, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 });
    return jobId;
  }

  /** A replay job for this reservation token is still queued or running. */
  async hasReplayJob(ref: SessionRef, token: string): Promise<boolean> {
    return (await this.shardOf(ref).getJob(`replay-${token}`)) !== undefined;
  }

  /** Takes back a job no worker has started; best effort. */
  async withdraw(ref: SessionRef, jobId: string): Promise<void> {
    await this.shardOf(ref)
      .remove(jobId)
      .catch(() => 0);
  }

  /** Best effort: the run's ledger state, not the queue, decides whether a cell may start. */
  async remove(ref: SessionRef, runId: string): Promise<void> {
    await this.shardOf(ref)
      .remove(runId)
      .catch(() => 0);
  }

  /** Depth and oldest waiting job over every shard, for the queue gauges. */
  async stats(): Promise<QueueStats> {
    const all = await Promise.all(this.shards.map((queue) => readQueueStats(queue)));
    const counts = { ...all[0].counts };
    for (const { counts: more } of all.slice(1))
      for (const state of Object.keys(counts) as (keyof typeof counts)[]) counts[state] += more[state];
    const times = all.map((s) => s.oldestWaitingAt).filter((t): t is number => t !== null);
    return { counts, oldestWaitingAt: times.length > 0 ? Math.min(...times) : null };
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((queue) => queue.close()));
  }

  private shardOf(ref: { tenant: string; sessionId: string }): Queue {
    return this.shards[cellQueueShard(ref.tenant, ref.sessionId, this.shards.length)];
  }
}
