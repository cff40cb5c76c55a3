import type { CellDispatchMode } from '@codemode/config';
import type { CellJob, SessionRef } from '@codemode/contracts';
import type { CellEntryRef, CellStream } from '@codemode/events';
import type { CellQueue } from './cell-queue';
import type { QueueStats } from './queue-stats';

/**
 * How a new cell reaches a worker (`CODEMODE_CELL_DISPATCH`, SPEC §13): a BullMQ job on its
 * shard's queue, or an entry on its shard's stream. Replays stay on the queue either way.
 */
export class CellDispatch {
  constructor(
    private readonly mode: CellDispatchMode,
    private readonly queue: CellQueue,
    private readonly stream: CellStream,
  ) {}

  /** New cells travel on the streams: their entry is sent in the socket write of their request (ExecService). */
  get onStream(): boolean {
    return this.mode === 'stream';
  }

  /**
   * `rank`: the tenant's calls in flight, this one included (the queue's priority, the stream's
   * lane). Answers where the stream entry is (null for a job: its id is the run id).
   */
  async add(job: CellJob, rank: number): Promise<CellEntryRef | null> {
    if (this.mode === 'stream') return this.stream.add(job, rank);
    await this.queue.add(job, rank);
    return null;
  }

  /**
   * Takes back a cell no worker needs to start: abandoned before it started, or (its stream
   * `entry`) naming a run never created, its request an idempotent repeat or sent again under a
   * new run id. Best effort: a worker that took it already finds its run ended or absent and drops
   * it (SPEC §13).
   */
  async remove(ref: SessionRef, runId: string, entry: CellEntryRef | null): Promise<void> {
    if (entry) await this.stream.withdraw(ref, entry).catch(() => undefined);
    else await this.queue.remove(ref, runId);
  }

  /**
   * Depth of the cell queue for the gauges and the fleet view: its jobs (replays, and new cells on
   * `bullmq`) plus, on `stream`, each shard stream's entries not yet delivered (`waiting`) and
   * delivered but not acknowledged (`active`).
   */
  async stats(): Promise<QueueStats> {
    const queued = await this.queue.stats();
    if (this.mode === 'bullmq') return queued;
    const shards = Array.from({ length: this.stream.shardCount }, (_, shard) => this.stream.depth(shard));
    const counts = { ...queued.counts };
    const times = queued.oldestWaitingAt === null ? [] : [queued.oldestWaitingAt];
    for (const depth of await Promise.all(shards)) {
      counts.waiting += depth.waiting;
      counts.active += depth.active;
      if (depth.oldestWaitingAt !== null) times.push(depth.oldestWaitingAt);
    }
    return { counts, oldestWaitingAt: times.length > 0 ? Math.min(...times) : null };
  }
}
