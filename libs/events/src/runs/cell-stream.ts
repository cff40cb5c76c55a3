import { cellQueueName, cellQueueShard, type CellJob, type SessionRef } from '@codemode/contracts';
import type { KeySpace } from '../platform/keys';
import { guard, type RedisClient } from '../platform/redis';

/** The consumer group every worker reads a shard's stream in. */
export const CELL_GROUP = 'cells';
/** The one field of an entry: the cell's job, JSON (CellJobSchema). */
const JOB_FIELD = 'job';

/** An entry as read or claimed: its id and its job's JSON, parsed by the reader. */
export interface CellEntry {
  readonly id: string;
  readonly job: string;
}

/** An entry delivered and not acknowledged yet (`XPENDING`). */
export interface PendingCellEntry {
  readonly id: string;
  /** The consumer holding it: a worker id. */
  readonly consumer: string;
  readonly idleMs: number;
  /** How often it was delivered so far. */
  readonly deliveries: number;
}

type RawEntry = [id: string, fields: string[] | null];

/**
 * New cells on a Redis Stream per cell-queue shard, read by a consumer group (SPEC §13,
 * `CODEMODE_CELL_DISPATCH=stream`): the API adds an entry per new cell to its session's shard;
 * workers read, acknowledge and reclaim entries. Every command names one key, so each works on a
 * Redis Cluster.
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

  /** Appends a new cell's job to its session's shard; answers the entry id. */
  async add(job: CellJob): Promise<string> {
    const id = await guard(() => this.redis.xadd(this.key(this.shardOf(job)), '*', JOB_FIELD, JSON.stringify(job)));
    return id as string;
  }

  /** Creates the shard's group (and stream) if missing, from the first entry: entries added before any worker existed are delivered. */
  async ensureGroup(shard: number): Promise<void> {
    try {
      await guard(() => this.redis.xgroup('CREATE', this.key(shard), CELL_GROUP, '0', 'MKSTREAM'));
    } catch (error) {
      if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
    }
  }

  /**
   * Up to `count` entries never delivered before, to `consumer`, waiting up to `blockMs` for one;
   * or, `from` '0', the entries pending under `consumer` already (a worker started again under the
   * same id takes back what its previous life held). `connection` is a blocking connection of the
   * caller's (the wait holds it).
   */
  async read(
    connection: RedisClient,
    shard: number,
    consumer: string,
    count: number,
    blockMs: number,
    from: '>' | '0' = '>',
  ): Promise<CellEntry[]> {
    const read = () =>
      connection.xreadgroup('GROUP', CELL_GROUP, consumer, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.key(shard), from);
    const reply: unknown = await guard(read);
    return reply ? entriesOf((reply as [key: string, entries: RawEntry[]][])[0][1]) : [];
  }

  /** Acknowledges and deletes an entry (one round trip: both commands are pipelined). */
  async ack(shard: number, id: string): Promise<void> {
    const key = this.key(shard);
    await guard(() => Promise.all([this.redis.xack(key, CELL_GROUP, id), this.redis.xdel(key, id)]));
  }

  /** Up to `count` entries pending for at least `minIdleMs`, oldest first (after the id `after`, when given). */
  async pending(shard: number, minIdleMs: number, count: number, after?: string): Promise<PendingCellEntry[]> {
    const start = after === undefined ? '-' : `(${after}`;
    const reply = (await guard(() => this.redis.xpending(this.key(shard), CELL_GROUP, 'IDLE', minIdleMs, start, '+', count))) as [
      id: string,
      consumer: string,
      idleMs: number,
      deliveries: number,
    ][];
    return reply.map(([id, consumer, idleMs, deliveries]) => ({ id, consumer, idleMs: Number(idleMs), deliveries: Number(deliveries) }));
  }

  /**
   * Moves the entries `ids` to `consumer` if each is still idle for at least `minIdleMs` (so of two
   * workers claiming one entry, one gets it); answers the ones it got. Each delivery count grows by one.
   */
  async claim(shard: number, consumer: string, minIdleMs: number, ids: readonly string[]): Promise<CellEntry[]> {
    if (ids.length === 0) return [];
    const reply = (await guard(() => this.redis.call('XCLAIM', this.key(shard), CELL_GROUP, consumer, minIdleMs, ...ids))) as RawEntry[];
    return entriesOf(reply);
  }

  /** Removes `consumer` from the shard's group if it holds no entry (a worker that stops); true if removed. */
  async leave(shard: number, consumer: string): Promise<boolean> {
    const key = this.key(shard);
    const held: unknown[] = await guard(() => this.redis.xpending(key, CELL_GROUP, '-', '+', 1, consumer));
    if (held.length > 0) return false;
    await guard(() => this.redis.xgroup('DELCONSUMER', key, CELL_GROUP, consumer));
    return true;
  }

  /**
   * The shard's backlog for the queue gauges: entries not delivered yet (`waiting`, and when the
   * oldest of them was added), and entries delivered and not acknowledged yet (`active`). Acknowledged
   * entries are deleted, so the stream holds only these two kinds.
   */
  async depth(shard: number): Promise<{ waiting: number; active: number; oldestWaitingAt: number | null }> {
    const key = this.key(shard);
    const [length, groups] = await guard(() => Promise.all([this.redis.xlen(key), this.redis.xinfo('GROUPS', key).catch(() => [])]));
    const group = (groups as unknown[][]).map(fieldsOf).find((fields) => fields.get('name') === CELL_GROUP);
    // No group yet (no worker ever started): every entry waits, from the first.
    const active = group ? Number(group.get('pending') ?? 0) : 0;
    const from = group ? `(${String(group.get('last-delivered-id'))}` : '-';
    const [next] = (await guard(() => this.redis.xrange(key, from, '+', 'COUNT', 1))) as RawEntry[];
    return { waiting: Math.max(0, length - active), active, oldestWaitingAt: next ? Number(next[0].split('-')[0]) : null };
  }

  private key(shard: number): string {
    return this.keys.cellStream(cellQueueName(shard));
  }
}

/** A flat `[name, value, …]` reply as a map. */
function fieldsOf(flat: unknown[]): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
  return fields;
}

/**
 * Entries with their job field ('' when it has none: the reader drops it). An entry deleted under
 * its pending id (no fields) is left out.
 */
function entriesOf(raw: readonly RawEntry[]): CellEntry[] {
  const entries: CellEntry[] = [];
  for (const [id, fields] of raw) {
    if (!fields) continue;
    const at = fields.findIndex((field, index) => index % 2 === 0 && field === JOB_FIELD);
    entries.push({ id, job: at >= 0 ? (fields[at + 1] ?? '') : '' });
  }
  return entries;
}
