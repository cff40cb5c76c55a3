import type { Event, EventPage, EventType, SessionRef } from '@codemode/contracts';
import type { Redis } from 'ioredis';
import { InvalidArgumentError, InvalidCursorError, InvalidEventError } from './errors';
import { decodeEntry, encodeEvent, rawsAndFactsArgs, toPublicEvent, type LoggedEvent } from './event-encoding';
import type { KeySpace } from './keys';
import { checkReply } from './lua-errors';
import { closeConnection, duplicateForBlocking, guard, toStoreError } from './redis';
import { ScriptLoader } from './script-loader';
import { SessionIndex } from './session-index';

/** Stream ids are `<ms>-<seq>`; a bare `<ms>` is accepted by Redis as `<ms>-0`. */
const CURSOR_PATTERN = /^\d{1,20}(-\d{1,20})?$/;
export const MAX_PAGE = 1000;
/** How long one XREAD BLOCK waits before looping (bounds how stale an abort check can be). */
const FOLLOW_BLOCK_MS = 5_000;

type StreamEntry = [id: string, fields: string[]];

/** A generic event write; see lua/append-event.lua for which types need their own script. */
export interface AppendInput {
  type: EventType;
  /** Set for run-scoped events; the write is then fenced by `epoch`. */
  runId?: string;
  /** The writer's lease epoch; @default 0 (session-level writes). */
  epoch?: number;
  data: Record<string, unknown>;
  /** Published (verbatim `message`) in the same script, after the event is in the log. */
  publish?: { channel: string; message: string };
}

/** Reads, tails and (generically) appends a session's event stream. */
export class EventLog {
  private readonly index: SessionIndex;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {
    this.index = new SessionIndex(redis, keys, scripts);
  }

  /** One page of events after `after` (exclusive); `next` is set when more exist. */
  async read(ref: SessionRef, opts: { after?: string; limit: number }): Promise<EventPage> {
    const page = await this.readLogged(ref, opts);
    return { events: page.events.map(toPublicEvent), next: page.next };
  }

  /** Like `read`, keeping each event's stored epoch (rebuilds and recovery). */
  async readLogged(ref: SessionRef, opts: { after?: string; limit: number }): Promise<{ events: LoggedEvent[]; next: string | null }> {
    const { after, limit } = opts;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new InvalidArgumentError('limit', `must be an integer from 1 to ${MAX_PAGE}`);
    }
    if (after !== undefined) checkCursor(after);
    const key = this.keys.events(ref);
    let entries: StreamEntry[];
    try {
      entries = await this.redis.xrange(key, after === undefined ? '-' : `(${after}`, '+', 'COUNT', limit + 1);
    } catch (err) {
      // Syntactically fine but out of range (e.g. past the largest id): still a bad cursor.
      if (after !== undefined && err instanceof Error && /stream ID|start ID/i.test(err.message)) {
        throw new InvalidCursorError(after);
      }
      throw toStoreError(err);
    }
    const more = entries.length > limit;
    const events = entries.slice(0, limit).map(decodeEntry);
    return { events, next: more ? events[events.length - 1].id : null };
  }

  /**
   * The log of a session, oldest first (rebuilds and recovery; not for request paths); with
   * `sinceMs`, only events appended from that millisecond on (stream ids carry their time).
   */
  async history(ref: SessionRef, sinceMs?: number): Promise<LoggedEvent[]> {
    const all: LoggedEvent[] = [];
    let after: string | undefined = sinceMs !== undefined && sinceMs > 0 ? `${Math.floor(sinceMs) - 1}-0` : undefined;
    for (;;) {
      const page = await this.readLogged(ref, { after, limit: MAX_PAGE });
      all.push(...page.events);
      if (!page.next) return all;
      after = page.next;
    }
  }

  /**
   * Live tail: yields events after `after` (or, when undefined, after the last event at the time
   * iteration starts) until `signal` aborts. Uses its own connection, because XREAD BLOCK holds
   * a connection for its whole wait; the connection is closed when the iteration ends.
   */
  async *follow(ref: SessionRef, after: string | undefined, signal: AbortSignal): AsyncIterable<Event> {
    if (after !== undefined) checkCursor(after);
    const key = this.keys.events(ref);
    if (signal.aborted) return;
    const conn = duplicateForBlocking(this.redis, 'events-follow');
    // Disconnecting rejects the pending XREAD at once instead of waiting out its BLOCK.
    const onAbort = () => closeConnection(conn);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let cursor = after ?? (await this.lastId(key));
      while (!signal.aborted) {
        let reply: [string, StreamEntry[]][] | null;
        try {
          reply = await conn.xread('COUNT', 100, 'BLOCK', FOLLOW_BLOCK_MS, 'STREAMS', key, cursor);
        } catch (err) {
          if (signal.aborted) return;
          throw toStoreError(err);
        }
        for (const entry of reply?.[0]?.[1] ?? []) {
          const event = decodeEntry(entry);
          cursor = event.id;
          yield toPublicEvent(event);
          if (signal.aborted) return;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      closeConnection(conn);
    }
  }

  /** True once any write created the session. */
  async exists(ref: SessionRef): Promise<boolean> {
    return (await guard(() => this.redis.exists(this.keys.session(ref)))) === 1;
  }

  /**
   * Appends one event through the shared append path (projections updated in the same script).
   * `run.requested`, `run.started`, `session.configured`, `store.committed` and `tools.registered`
   * have preconditions or projection keys of their own and their own scripts (RunLedger,
   * SessionLedger, StoreLedger, ClientToolsLedger); they are refused here.
   */
  async append(ref: SessionRef, input: AppendInput): Promise<{ eventId: string }> {
    const runId = input.runId ?? '';
    const epoch = input.epoch ?? 0;
    if (input.type.startsWith('run.') && runId === '') throw new InvalidEventError(`${input.type} without a runId`);
    const ev = encodeEvent(input.type, input.data);
    const args = [input.type, runId, epoch, ev.head, input.publish?.channel ?? '', input.publish?.message ?? '', ...rawsAndFactsArgs(ev)];
    const write = (): Promise<unknown> => guard(() => this.scripts.run(this.redis, 'append-event', this.keys.scriptKeys(ref, runId), args));
    // A run's own events are activity its exec or wait already put in the sessions index.
    const raw = runId === '' ? await this.index.alongside(ref, write) : await write();
    const reply = checkReply(raw, { runId, epoch, type: input.type });
    return { eventId: String(reply[1]) };
  }

  private async lastId(key: string): Promise<string> {
    const last = (await guard(() => this.redis.xrevrange(key, '+', '-', 'COUNT', 1))) as StreamEntry[];
    return last[0]?.[0] ?? '0-0';
  }
}

function checkCursor(after: string): void {
  if (!CURSOR_PATTERN.test(after)) throw new InvalidCursorError(after);
}
