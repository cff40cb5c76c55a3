import {
  CELL_LANES,
  redisFailureLog,
  type CellEntry,
  type CellEntryRef,
  type CellLane,
  type CellStream,
  type PendingCellEntry,
} from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { deliveredTooOften, otherConsumers, reclaimable, unseenOwn } from './cell-reclaim';

/** Passes between two looks for consumers of dead workers left in the groups (about ten leases). */
const FORGET_EVERY_PASSES = 20;
/** Pending entries looked at per page, and pages per shard and pass. */
const PENDING_PAGE = 64;
const MAX_PAGES = 16;

export interface CellReclaimerOptions {
  readonly stream: CellStream;
  /** The one owner of "is this worker alive" (WorkerPresence). */
  readonly presence: { isAlive(workerId: string): Promise<boolean> };
  readonly workerId: string;
  readonly presenceTtlMs: number;
  readonly logger: Logger;
  /** Handles a claimed entry as a re-delivery of its cell. */
  deliver(shard: number, entry: CellEntry): void;
  acknowledge(shard: number, entry: CellEntryRef): Promise<void>;
  /** This worker holds the entry: in hand, or to be looked at again (CellStreamReaders). */
  holds(shard: number, entry: CellEntryRef): boolean;
}

/**
 * What replaces BullMQ's stalled-job re-delivery for the cell streams (SPEC §13): every half lease
 * (with jitter), on each shard's lanes, the entries pending for at least a lease under consumers whose
 * worker's presence is gone are claimed (`XCLAIM`, which only takes an entry still idle that long,
 * so of two reclaimers one gets it) and handled as re-deliveries: the run's state decides, through
 * the recovery a re-delivered job takes (CellWork). Entries pending that long under this worker
 * that it does not hold (`unseenOwn`) are claimed back and handled the same way. An entry past its
 * third delivery is acknowledged and logged instead; the live-run sweeper ends its run.
 */
export class CellReclaimer {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private passes = 0;

  constructor(private readonly options: CellReclaimerOptions) {}

  start(): void {
    this.schedule();
  }

  /** No more passes; resolves once a pass under way ended (what it claimed is delivered by then). */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.pass;
  }

  /** One pass over every shard (the timer's tick; specs call it directly). */
  async reclaimAll(): Promise<void> {
    for (let shard = 0; shard < this.options.stream.shardCount; shard += 1) {
      for (const lane of CELL_LANES) {
        try {
          await this.reclaim(shard, lane);
        } catch (error) {
          const admitted = redisFailureLog.admit(error instanceof Error ? error : new Error(String(error)));
          if (admitted)
            this.options.logger.warn({ err: error, consumer: 'cell-reclaimer', shard, lane, ...admitted }, 'cell stream reclaim failed');
        }
      }
    }
  }

  /**
   * Consumers of workers whose lease lapsed and that hold nothing any more (their entries
   * reclaimed) leave the groups: a crashed worker never leaves itself, and a fleet that replaces
   * its workers would otherwise list every worker it ever ran, on every shard and lane. A consumer
   * holding an entry stays (`leave` checks; removing it would drop the entry). One line per pass.
   */
  async forgetDeadConsumers(): Promise<void> {
    const forgotten = new Set<string>();
    const alive = new Map<string, boolean>();
    const isAlive = async (consumer: string) =>
      alive.get(consumer) ?? alive.set(consumer, await this.options.presence.isAlive(consumer)).get(consumer);
    for (let shard = 0; shard < this.options.stream.shardCount; shard += 1) {
      try {
        const others = (await this.options.stream.consumers(shard)).filter((consumer) => consumer !== this.options.workerId);
        for (const consumer of others)
          if (!(await isAlive(consumer)) && (await this.options.stream.leave(shard, consumer))) forgotten.add(consumer);
      } catch (error) {
        const admitted = redisFailureLog.admit(error instanceof Error ? error : new Error(String(error)));
        if (admitted)
          this.options.logger.warn({ err: error, consumer: 'cell-reclaimer', shard, ...admitted }, 'could not list cell stream consumers');
      }
    }
    if (forgotten.size > 0)
      this.options.logger.info(
        { consumers: [...forgotten] },
        'removed consumers of workers whose lease lapsed from the cell stream groups',
      );
  }

  private schedule(): void {
    const half = this.options.presenceTtlMs / 2;
    this.timer = setTimeout(
      () => {
        this.passes += 1;
        const forget = this.passes % FORGET_EVERY_PASSES === 0;
        this.pass = (forget ? this.reclaimAll().then(() => this.forgetDeadConsumers()) : this.reclaimAll()).finally(() => {
          this.pass = undefined;
          if (this.timer) this.schedule();
        });
      },
      half * (0.75 + Math.random() * 0.5),
    );
    this.timer.unref();
  }

  /** Every page of a lane's entries pending for a lease: long-running cells of live workers may fill the first ones. */
  private async reclaim(shard: number, lane: CellLane): Promise<void> {
    const alive = new Map<string, boolean>();
    let after: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const pending = await this.options.stream.pending(shard, lane, this.options.presenceTtlMs, PENDING_PAGE, after);
      if (pending.length > 0) await this.reclaimPage(shard, lane, pending, alive);
      if (pending.length < PENDING_PAGE) return;
      after = pending[pending.length - 1].id;
    }
  }

  /** `alive`: what this pass learnt of each consumer's lease so far. */
  private async reclaimPage(shard: number, lane: CellLane, pending: PendingCellEntry[], alive: Map<string, boolean>): Promise<void> {
    const { stream, workerId, presenceTtlMs } = this.options;
    const unknown = otherConsumers(pending, workerId).filter((consumer) => !alive.has(consumer));
    const answers = await Promise.all(unknown.map((consumer) => this.options.presence.isAlive(consumer)));
    unknown.forEach((consumer, i) => alive.set(consumer, answers[i]));
    const live = new Set([...alive].filter(([, isAlive]) => isAlive).map(([consumer]) => consumer));
    const dead = reclaimable(pending, workerId, live);
    const unseen = unseenOwn(pending, workerId, (id) => this.options.holds(shard, { lane, id }));
    const taken = [...dead, ...unseen];
    if (taken.length === 0) return;
    const claimed = await stream.claim(
      shard,
      lane,
      workerId,
      presenceTtlMs,
      taken.map((entry) => entry.id),
    );
    const redelivered: string[] = [];
    for (const entry of claimed) {
      // Taken in hand here meanwhile (its look-again timer fired): that delivery handles it.
      if (this.options.holds(shard, entry)) continue;
      const from = taken.find((d) => d.id === entry.id);
      // XCLAIM counted one more delivery.
      const deliveries = (from?.deliveries ?? 0) + 1;
      if (deliveredTooOften(deliveries)) {
        this.options.logger.error(
          { shard, lane, entryId: entry.id, deliveries, from: from?.consumer },
          'cell entry delivered too often (its workers keep dying); dropped, the live-run sweeper ends its run',
        );
        await this.options.acknowledge(shard, entry);
        continue;
      }
      redelivered.push(entry.id);
      this.options.deliver(shard, entry);
    }
    // One line per page (of up to 64), however many cells a dead worker left (SPEC §13: no log storms).
    const ofDead = dead.filter((d) => redelivered.includes(d.id));
    if (ofDead.length > 0) {
      const from = [...new Set(ofDead.map((d) => d.consumer))];
      this.options.logger.warn({ shard, lane, entries: ofDead.length, from }, 'reclaimed cell entries of workers whose lease lapsed');
    }
    const ofOwn = unseen.filter((d) => redelivered.includes(d.id)).length;
    if (ofOwn > 0)
      this.options.logger.warn(
        { shard, lane, entries: ofOwn },
        'took back cell entries pending under this worker that it never saw (a read whose reply was lost)',
      );
  }
}
