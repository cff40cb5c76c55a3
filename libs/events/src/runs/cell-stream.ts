import { cellQueueName, cellQueueShard, type CellJob, type SessionRef } from '@codemode/contracts';
import type { KeySpace } from '../platform/keys';
import { guard, type RedisClient } from '../platform/redis';

/** The consumer group every worker reads a shard's stream in. */
export const CELL_GROUP = 'cells';
/** The one field of an entry: the cell's job, JSON (CellJobSchema). */
const JOB_FIELD = 'job';

/**
 * The two lanes of a shard (SPEC §10 fairness, what BullMQ's priority by rank did on the queue):
 * a cell whose tenant has at most this many calls in flight, itself included, goes on `first`,
 * which every read serves before `rest`. So a tenant with a call or two in flight is never behind
 * another tenant's backlog; within a lane, first come first served.
 */
const FIRST_LANE_MAX_RANK = 2;
export const CELL_LANES = ['first', 'rest'] as const;
export type CellLane = (typeof CELL_LANES)[number];

/** The lane of a cell whose tenant has `rank` calls in flight, this one included. */
export function cellLane(rank: number): CellLane {
  return rank <= FIRST_LANE_MAX_RANK ? 'first' : 'rest';
}

/** Where an entry is: its lane's stream and its id there. */
export interface CellEntryRef {
  readonly lane: CellLane;
  readonly id: string;
}

/** An entry as read or claimed: where it is and its job's JSON, parsed by the reader. */
export interface CellEntry extends CellEntryRef {
  readonly job: string;
}

/** An entry delivered and not acknowledged yet (`XPENDING`). */
export interface PendingCellEntry {
  readonly lane: CellLane;
  readonly id: string;
  /** The consumer holding it: a worker id. */
  readonly consumer: string;
  readonly idleMs: number;
  /** How often it was delivered so far. */
  readonly deliveries: number;
}

type RawEntry = [id: string, fields: string[] | null];

interface StreamDepth {
  readonly waiting: number;
  readonly active: number;
  readonly oldestWaitingAt: number | null;
}

/**
 * New cells on Redis Streams per cell-queue shard, one per lane, read by a consumer group (SPEC
 * §13, `CODEMODE_CELL_DISPATCH=stream`): the API adds an entry per new cell to its session's shard,
 * on its lane; workers read both lanes at once, acknowledge and reclaim entries. A command names
 * one key or both lanes of one shard (one hash tag), so each works on a Redis Cluster.
 */
export class CellStream {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly shards: number,
  ) {}

  get shardCount(): number {
    return this.shards;
  }

  shardOf(ref: SessionRef): number {
    return cellQueueShard(ref.tenant, ref.sessionId, this.shards);
  }

  /**
   * Appends a new cell's job to its session's shard, on the lane of `rank` (its tenant's calls in
   * flight, this one included); answers where the entry is.
   */
  async add(job: CellJob, rank: number): Promise<CellEntryRef> {
    const lane = cellLane(rank);
    const id = await guard(() => this.redis.xadd(this.key(this.shardOf(job), lane), '*', JOB_FIELD, JSON.stringify(job)));
    return { lane, id: id as string };
  }

  /** Creates the shard's groups (and streams) if missing, from the first entry: entries added before any worker existed are delivered. */
  async ensureGroup(shard: number): Promise<void> {
    const create = async (lane: CellLane) => {
      try {
        await guard(() => this.redis.xgroup('CREATE', this.key(shard, lane), CELL_GROUP, '0', 'MKSTREAM'));
      } catch (error) {
        if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
      }
    };
    await Promise.all(CELL_LANES.map(create));
  }

  /**
   * Up to `count` entries per lane never delivered before, to `consumer`, waiting up to `blockMs`
   * for one; or, `from` '0', the entries pending under `consumer` already (a worker started again
   * under the same id takes back what its previous life held). `first`-lane entries come first.
   * `connection` is a blocking connection of the caller's (the wait holds it).
   */
  async read(
    connection: RedisClient,
    shard: number,
    consumer: string,
    count: number,
    blockMs: number,
    from: '>' | '0' = '>',
  ): Promise<CellEntry[]> {
    const [first, rest] = CELL_LANES.map((lane) => this.key(shard, lane));
    const read = () =>
      connection.xreadgroup('GROUP', CELL_GROUP, consumer, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', first, rest, from, from);
    const reply = await guard<[key: string, entries: RawEntry[]][] | null>(read);
    if (!reply) return [];
    const ofLane = (lane: CellLane, key: string) => entriesOf(lane, reply.find(([replied]) => replied === key)?.[1] ?? []);
    return [...ofLane('first', first), ...ofLane('rest', rest)];
  }

  /** Deletes an entry of `ref`'s shard no worker needs to read; one a worker read already stays pending under it until acknowledged. */
  async withdraw(ref: SessionRef, entry: CellEntryRef): Promise<void> {
    await guard(() => this.redis.xdel(this.key(this.shardOf(ref), entry.lane), entry.id));
  }

  /** Acknowledges and deletes an entry (one round trip: both commands are pipelined). */
  async ack(shard: number, entry: CellEntryRef): Promise<void> {
    const key = this.key(shard, entry.lane);
    await guard(() => Promise.all([this.redis.xack(key, CELL_GROUP, entry.id), this.redis.xdel(key, entry.id)]));
  }

  /** Up to `count` entries of a lane pending for at least `minIdleMs`, oldest first (after the id `after`, when given). */
  async pending(shard: number, lane: CellLane, minIdleMs: number, count: number, after?: string): Promise<PendingCellEntry[]> {
    const start = after === undefined ? '-' : `(${after}`;
    const key = this.key(shard, lane);
    const reply = (await guard(() => this.redis.xpending(key, CELL_GROUP, 'IDLE', minIdleMs, start, '+', count))) as [
      id: string,
      consumer: string,
      idleMs: number,
      deliveries: number,
    ][];
    return reply.map(([id, consumer, idleMs, deliveries]) => ({
      lane,
      id,
      consumer,
      idleMs: Number(idleMs),
      deliveries: Number(deliveries),
    }));
  }

  /**
   * Moves the entries `ids` of a lane to `consumer` if each is still idle for at least `minIdleMs`
   * (so of two workers claiming one entry, one gets it); answers the ones it got. Each delivery
   * count grows by one.
   */
  async claim(shard: number, lane: CellLane, consumer: string, minIdleMs: number, ids: readonly string[]): Promise<CellEntry[]> {
    if (ids.length === 0) return [];
    const key = this.key(shard, lane);
    const reply = (await guard(() => this.redis.call('XCLAIM', key, CELL_GROUP, consumer, minIdleMs, ...ids))) as RawEntry[];
    return entriesOf(lane, reply);
  }

  /** The consumers (worker ids) listed in either lane's group of the shard. */
  async consumers(shard: number): Promise<string[]> {
    const listed = await Promise.all(
      CELL_LANES.map((lane) => guard(() => this.redis.xinfo('CONSUMERS', this.key(shard, lane), CELL_GROUP)).catch(noGroup)),
    );
    return [...new Set(listed.flatMap((consumers) => (consumers as unknown[][]).map((fields) => String(fieldsOf(fields).get('name')))))];
  }

  /** Removes `consumer` from the shard's groups if it holds no entry on either lane (a worker that stops); true if removed. */
  async leave(shard: number, consumer: string): Promise<boolean> {
    const keys = CELL_LANES.map((lane) => this.key(shard, lane));
    const held = await guard<unknown[][]>(() =>
      Promise.all(keys.map((key) => this.redis.xpending(key, CELL_GROUP, '-', '+', 1, consumer))),
    );
    if (held.some((entries) => entries.length > 0)) return false;
    await guard(() => Promise.all(keys.map((key) => this.redis.xgroup('DELCONSUMER', key, CELL_GROUP, consumer))));
    return true;
  }

  /**
   * The shard's backlog over both lanes for the queue gauges: entries not delivered yet (`waiting`,
   * and when the oldest of them was added), and entries delivered and not acknowledged yet
   * (`active`). Acknowledged entries are deleted, so the streams hold only these two kinds.
   */
  async depth(shard: number): Promise<StreamDepth> {
    const [first, rest] = await Promise.all(CELL_LANES.map((lane) => this.laneDepth(this.key(shard, lane))));
    const times = [first.oldestWaitingAt, rest.oldestWaitingAt].filter((at): at is number => at !== null);
    return {
      waiting: first.waiting + rest.waiting,
      active: first.active + rest.active,
      oldestWaitingAt: times.length > 0 ? Math.min(...times) : null,
    };
  }

  private async laneDepth(key: string): Promise<StreamDepth> {
    const [length, groups] = await guard(() => Promise.all([this.redis.xlen(key), this.redis.xinfo('GROUPS', key).catch(() => [])]));
    const group = (groups as unknown[][]).map(fieldsOf).find((fields) => fields.get('name') === CELL_GROUP);
    // No group yet (no worker ever started): every entry waits, from the first.
    const active = group ? Number(group.get('pending') ?? 0) : 0;
    const from = group ? `(${String(group.get('last-delivered-id'))}` : '-';
    const [next] = (await guard(() => this.redis.xrange(key, from, '+', 'COUNT', 1))) as RawEntry[];
    return { waiting: Math.max(0, length - active), active, oldestWaitingAt: next ? Number(next[0].split('-')[0]) : null };
  }

  private key(shard: number, lane: CellLane): string {
    return this.keys.cellStream(cellQueueName(shard), lane);
  }
}

/** A lane whose group does not exist yet lists no consumer. */
function noGroup(error: unknown): unknown[] {
  if (error instanceof Error && /NOGROUP|no such key/i.test(error.message)) return [];
  throw error;
}

/** A flat `[name, value, …]` reply as a map. */
function fieldsOf(flat: unknown[]): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
  return fields;
}

/**
 * A lane's entries with their job field ('' when it has none: the reader drops it). An entry
 * deleted under its pending id (no fields) is left out.
 */
function entriesOf(lane: CellLane, raw: readonly RawEntry[]): CellEntry[] {
  const entries: CellEntry[] = [];
  for (const [id, fields] of raw) {
    if (!fields) continue;
    const at = fields.findIndex((field, index) => index % 2 === 0 && field === JOB_FIELD);
    entries.push({ lane, id, job: at >= 0 ? (fields[at + 1] ?? '') : '' });
  }
  return entries;
}
