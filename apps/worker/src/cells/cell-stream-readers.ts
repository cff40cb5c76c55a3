import { CellJobSchema, type CellJob } from '@codemode/contracts';
import {
  closeConnection,
  duplicateForBlocking,
  redisFailureLog,
  retryWhileStoreUnavailable,
  type CellEntry,
  type CellEntryRef,
  type CellStream,
  type RedisClient,
} from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import type { Detached } from '../core/queue-consumer';
import { EntryAck } from '../runs/entry-ack';
import { CellReclaimer } from './cell-reclaimer';
import type { CellOutcome } from './cell-work';
import { ShardSlots } from './shard-slots';

/** How long one read waits for an entry before it reads again. */
const READ_BLOCK_MS = 5_000;
/** How long a reader waits after a failed read (SPEC §13 Faults: no busy loop while Redis is away). */
const READ_RETRY_DELAY_MS = 1_000;
/** Entries pending under this worker's id at its start taken back per shard (a restart's leftovers are few). */
const OWN_PENDING_PAGE = 1_000;
/** How long an acknowledgement is retried while Redis is away: an unacknowledged entry of a live worker is never reclaimed. */
const ACK_GIVE_UP_MS = 60_000;

/** What the readers do with a cell (CellWork, the one owner of a delivery's work). */
export interface StreamCellWork {
  readonly lookAgainMs: number;
  runCell(cell: CellJob, entryAck: EntryAck): Promise<CellOutcome>;
  goOn(run: { tenant: string; runId: string }, work: Promise<void>): Promise<void | Detached>;
}

export interface CellStreamReadersOptions {
  /** False when new cells travel as BullMQ jobs (`CODEMODE_CELL_DISPATCH`): nothing is read. */
  readonly enabled: boolean;
  readonly stream: CellStream;
  /** The connection the blocking readers are duplicated from; acknowledgements and claims use it. */
  readonly redis: RedisClient;
  readonly presence: { isAlive(workerId: string): Promise<boolean> };
  readonly cells: StreamCellWork;
  /** This worker: its consumer name in every shard's group. */
  readonly workerId: string;
  /** Cells at once over every shard (`cellConcurrency`). */
  readonly budget: number;
  readonly presenceTtlMs: number;
  readonly logger: Logger;
  /** Told when each entry is taken, with the ms its id carries (the queue-wait metric). */
  readonly onTaken?: (enqueuedAt: number) => void;
  /** @default 5000 */
  readonly blockMs?: number;
}

/**
 * The worker's readers of the cell streams (SPEC §13, `CODEMODE_CELL_DISPATCH=stream`): per shard,
 * a loop of `XREADGROUP` on a blocking connection of its own (one key per command, so it works on a
 * Redis Cluster), as many entries as the shard's slots allow (ShardSlots over `cellConcurrency`).
 * Each entry is run as a new cell (CellWork) and acknowledged in the socket write of its run's end
 * (or first park: EntryAck), else once its work ends, also when it went on without its slot (an entry stays pending under a live consumer, so nothing else takes it);
 * one whose owner's lease has not lapsed yet stays pending and is handled again in half a lease.
 * Entries of dead workers come back through CellReclaimer, and so do entries pending under this
 * worker that it holds neither in hand nor to look at again (a read answered whose reply was lost).
 */
export class CellStreamReaders {
  private readonly slots: ShardSlots;
  private readonly connections: RedisClient[] = [];
  private readonly loops: Promise<void>[] = [];
  private readonly works = new Set<Promise<void>>();
  /** Shards whose reader has its group and a connection that answered. */
  private readonly readyShards = new Set<number>();
  /** Entries delivered in this life whose work has not ended (`<shard>:<lane>:<id>`). */
  private readonly inHand = new Set<string>();
  /** Entries whose run is still its live owner's, handled again when their timer fires (`handleLater`). */
  private readonly lookAgain = new Map<string, NodeJS.Timeout>();
  private readonly reclaimer: CellReclaimer;
  private closed = false;

  constructor(private readonly options: CellStreamReadersOptions) {
    this.slots = new ShardSlots(options.budget, options.stream.shardCount);
    this.reclaimer = new CellReclaimer({
      stream: options.stream,
      presence: options.presence,
      workerId: options.workerId,
      presenceTtlMs: options.presenceTtlMs,
      logger: options.logger,
      deliver: (shard, entry) => this.deliver(shard, entry),
      acknowledge: (shard, entry) => this.acknowledge(shard, entry),
      holds: (shard, entry) => this.holds(shard, entry),
    });
  }

  /**
   * Reading and reclaiming on every shard (or not meant to: readiness holds then): each shard's
   * group exists and its reader's connection answered, so a cell added now is read within a round
   * trip (the worker's readiness waits for it: a cell's start budget may be shorter than a
   * cluster connection's setup).
   */
  get running(): boolean {
    return !this.options.enabled || (this.readyShards.size === this.options.stream.shardCount && !this.closed);
  }

  /** Starts once the app is up, as the queue consumers do. */
  onApplicationBootstrap(): void {
    if (this.options.enabled) this.start();
  }

  start(): void {
    for (let shard = 0; shard < this.options.stream.shardCount; shard += 1) {
      const connection = duplicateForBlocking(this.options.redis, `worker-${this.options.workerId}-cell-stream-${shard}`);
      this.connections.push(connection);
      this.loops.push(this.read(shard, connection));
    }
    this.reclaimer.start();
  }

  /**
   * Reads no more, then runs what it holds: every entry it took, and any a closed read was
   * answered with, to its end and acknowledgement (within their budgets).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.slots.close();
    for (const timer of this.lookAgain.values()) clearTimeout(timer);
    this.lookAgain.clear();
    // A pending blocking read rejects at once; Redis may have answered it already, so the entries
    // it delivered are pending here unseen: taken from this consumer's own pending list below.
    for (const connection of this.connections) closeConnection(connection);
    await Promise.all([...this.loops, this.reclaimer.stop()]);
    if (this.connections.length > 0) await this.takeBackUnseen();
    while (this.works.size > 0) await Promise.all([...this.works]);
    if (this.connections.length > 0) await this.leaveGroups();
  }

  /** Handles one entry as a delivery of its cell, holding a slot of `shard` until its work ends or goes on without it. */
  deliver(shard: number, entry: CellEntry): void {
    const cell = parseCell(entry.job);
    if (!cell) {
      this.options.logger.error({ shard, lane: entry.lane, entryId: entry.id }, 'cell stream entry without a readable job; dropped');
      this.track(this.acknowledge(shard, entry));
      return;
    }
    this.options.onTaken?.(Number(entry.id.split('-')[0]));
    const held = heldKey(shard, entry);
    this.inHand.add(held);
    this.slots.take(shard);
    // Sent beside the run's end (or first park) when there is one; else, or if that send failed, here once the work ended.
    const entryAck = new EntryAck(() => this.options.stream.ack(shard, entry));
    const settle = () => entryAck.settle(() => this.acknowledge(shard, entry));
    const work = this.options.cells.runCell(cell, entryAck).then(
      (outcome) => (outcome === 'later' ? this.handleLater(shard, entry) : settle()),
      (error: unknown) => {
        this.options.logger.error({ err: error, runId: cell.runId, entryId: entry.id }, 'cell entry failed; its run may need recovery');
        return settle();
      },
    );
    this.track(work);
    void work.finally(() => this.inHand.delete(held));
    void this.options.cells.goOn(cell, work).finally(() => this.slots.give(shard));
  }

  /** Acknowledges and deletes a handled entry; never rejects (a failure is logged). */
  async acknowledge(shard: number, entry: CellEntryRef): Promise<void> {
    try {
      await retryWhileStoreUnavailable(() => this.options.stream.ack(shard, entry), { giveUpMs: ACK_GIVE_UP_MS });
    } catch (error) {
      this.options.logger.error(
        { err: error, shard, lane: entry.lane, entryId: entry.id },
        'could not acknowledge a cell entry; it stays pending',
      );
    }
  }

  private async read(shard: number, connection: RedisClient): Promise<void> {
    let grouped = false;
    let ownTaken = false;
    while (!this.closed) {
      try {
        if (!grouped) await this.options.stream.ensureGroup(shard);
        grouped = true;
        // Entries pending under this worker id from a previous life (a fixed CODEMODE_WORKER_ID):
        // nobody reclaims them while this id's lease is alive again, so they are delivered again here.
        // Once only: this read counts a delivery of every entry pending here, those running too
        // (entries a lost reply left here come back through the reclaimer, which counts theirs only).
        if (!ownTaken)
          for (const entry of await this.options.stream.read(connection, shard, this.options.workerId, OWN_PENDING_PAGE, 0, '0'))
            this.deliver(shard, entry);
        ownTaken = true;
        this.readyShards.add(shard);
        const count = await this.slots.whenFree(shard);
        if (count === 0) return;
        const entries = await this.options.stream.read(
          connection,
          shard,
          this.options.workerId,
          count,
          this.options.blockMs ?? READ_BLOCK_MS,
        );
        // Taken even while closing: they are pending under this worker now.
        for (const entry of entries) this.deliver(shard, entry);
      } catch (error) {
        if (this.closed) return;
        // The stream or its group was deleted (NOGROUP): created again before the next read.
        if (error instanceof Error && error.message.includes('NOGROUP')) grouped = false;
        const admitted = redisFailureLog.admit(error instanceof Error ? error : new Error(String(error)));
        if (admitted) this.options.logger.warn({ err: error, consumer: 'cell-stream', shard, ...admitted }, 'cell stream reader error');
        await new Promise((resolve) => setTimeout(resolve, READ_RETRY_DELAY_MS));
      }
    }
  }

  /**
   * Entries pending under this worker that no delivery of this life holds: a read answered while
   * its connection closed (the shutdown's), whose reply never came back. Delivered now, so a
   * stopping worker runs them rather than leaving them a lease to be reclaimed. Best effort.
   */
  private async takeBackUnseen(): Promise<void> {
    const { stream, redis, workerId } = this.options;
    for (let shard = 0; shard < stream.shardCount; shard += 1) {
      try {
        for (const entry of await stream.read(redis, shard, workerId, OWN_PENDING_PAGE, 0, '0'))
          if (!this.inHand.has(heldKey(shard, entry))) this.deliver(shard, entry);
      } catch (error) {
        this.options.logger.warn({ err: error, shard }, 'could not look for unseen cell entries at close; a reclaim takes them');
      }
    }
  }

  /** Out of every shard's group where it holds nothing (consumers are never removed otherwise); best effort. */
  private async leaveGroups(): Promise<void> {
    const shards = Array.from({ length: this.options.stream.shardCount }, (_, shard) => shard);
    await Promise.all(
      shards.map((shard) =>
        this.options.stream.leave(shard, this.options.workerId).catch((error: unknown) => {
          this.options.logger.warn({ err: error, shard }, 'could not leave a cell stream group; this worker stays listed in it');
        }),
      ),
    );
  }

  /** The entry is in hand here, or to be looked at again. */
  private holds(shard: number, entry: CellEntryRef): boolean {
    const key = heldKey(shard, entry);
    return this.inHand.has(key) || this.lookAgain.has(key);
  }

  /** Its run is still its live owner's: the entry stays pending here and is handled again in half a lease. */
  private handleLater(shard: number, entry: CellEntry): void {
    if (this.closed) return;
    const key = heldKey(shard, entry);
    const timer = setTimeout(() => {
      this.lookAgain.delete(key);
      if (!this.closed) this.deliver(shard, entry);
    }, this.options.cells.lookAgainMs);
    this.lookAgain.set(key, timer);
  }

  private track(work: Promise<void>): void {
    this.works.add(work);
    void work.finally(() => this.works.delete(work));
  }
}

/** An entry's key in `inHand`: ids repeat across shards and lanes. */
function heldKey(shard: number, entry: CellEntryRef): string {
  return `${shard}:${entry.lane}:${entry.id}`;
}

function parseCell(json: string): CellJob | null {
  try {
    const parsed = CellJobSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
