import type { CellDispatchMode } from '@codemode/config';
import type { CellJob, SessionRef } from '@codemode/contracts';
import type { CellStream } from '@codemode/events';
import type { CellQueue } from './cell-queue';

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

  /** `rank`: the tenant's calls in flight, this one included (the queue's priority; the stream has none). */
  async add(job: CellJob, rank: number): Promise<void> {
    if (this.mode === 'stream') await this.stream.add(job);
    else await this.queue.add(job, rank);
  }

  /**
   * Best effort, for a cell abandoned before it started. A stream entry stays: the worker that
   * reads it finds its run ended and drops it.
   */
  async remove(ref: SessionRef, runId: string): Promise<void> {
    if (this.mode === 'bullmq') await this.queue.remove(ref, runId);
  }
}
