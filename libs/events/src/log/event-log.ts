import type { Event, EventData, EventPage, EventType, SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { EVENT_PAGE_BYTES } from '@codemode/config';
import { EventsError, InvalidArgumentError, InvalidCursorError, InvalidEventError, StoreCommandError } from '../platform/errors';
import { decodeEntry, encodeEvent, rawsAndFactsArgs, toPublicEvent, type LoggedEvent } from './event-encoding';
import type { KeySpace } from '../platform/keys';
import { checkReply, LUA_CODES, raisedScriptError } from '../platform/lua-errors';
import { caughtReplyError, closeConnection, duplicateForBlocking, failedCommand, guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';
import { SessionIndex } from './session-index';

/** Stream ids are `<ms>-<seq>`; a bare `<ms>` is accepted by Redis as `<ms>-0`. */
const CURSOR_PATTERN = /^\d{1,20}(-\d{1,20})?$/;
export const MAX_PAGE = 1000;
/** How long one XREAD BLOCK waits before looping (bounds how stale an abort check can be). */
const FOLLOW_BLOCK_MS = 5_000;
/** Events per page of a live tail; pages are bounded by bytes too (see `follow`). */
const FOLLOW_PAGE_EVENTS = 100;
/** Events read by id per script call (`loggedAt`): bounds what one reply holds. */
const READ_BY_ID = 100;
/**
 * How long a live tail's mark on its session lasts (`KeySpace.followed`), renewed at each page it
 * reads once a third of it passed: longer than a wait for the next event (FOLLOW_BLOCK_MS).
 */
const FOLLOWED_MS = 3 * FOLLOW_BLOCK_MS;

type StreamEntry = [id: string, fields: string[]];

/** A generic write of an event of type `T`, its data typed by `T` (libs/contracts/src/event-data.ts). */
export interface AppendOf<T extends EventType> {
  type: T;
  /** Set for run-scoped events; the write is then fenced by `epoch`. */
  runId?: string;
  /** The writer's lease epoch; @default 0 (session-level writes). */
  epoch?: number;
  data: EventData<T>;
  /** Published (verbatim `message`) in the same script, after the event is in the log. */
  publish?: { channel: string; message: string };
}

/** A generic event write, one member per type; see lua/append-event.lua for which types need their own script. */
export type AppendInput = { [T in EventType]: AppendOf<T> }[EventType];

/** Reads, tails and (generically) appends a session's event stream. */
export class EventLog {
  private readonly index: SessionIndex;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {
    this.index = new SessionIndex(redis, keys, scripts);
  }

  /**
   * One page of events after `after` (exclusive): at most `limit` events and, past the first, at
   * most `maxBytes` of them as stored, so a page of a log of large events stays small (SPEC §10
   * "Event streams"); `next` is set when more exist.
   */
  async read(ref: SessionRef, opts: { after?: string; limit: number; maxBytes?: number }): Promise<EventPage> {
    const page = await this.page(this.redis, ref, opts.after ?? '0-0', opts.limit, opts.maxBytes ?? EVENT_PAGE_BYTES);
    return { events: page.events.map(toPublicEvent), next: page.more ? page.events[page.events.length - 1].id : null };
  }

  /** Like `read`, keeping each event's stored epoch (rebuilds and recovery). */
  async readLogged(ref: SessionRef, opts: { after?: string; limit: number }): Promise<{ events: LoggedEvent[]; next: string | null }> {
    const page = await this.page(this.redis, ref, opts.after ?? '0-0', opts.limit, Number.MAX_SAFE_INTEGER);
    return { events: page.events, next: page.more ? page.events[page.events.length - 1].id : null };
  }

  /**
   * The events of these ids, wherever the log keeps them (its stream, or a finished run's record:
   * lua/read-log-events.lua), READ_BY_ID at a time. Ids the log no longer holds are absent.
   */
  async loggedAt(ref: SessionRef, ids: readonly string[]): Promise<Map<string, LoggedEvent>> {
    const found = new Map<string, LoggedEvent>();
    const keys = this.keys.logReadKeys(ref);
    for (let i = 0; i < ids.length; i += READ_BY_ID) {
      const entries = (await guard(() =>
        this.scripts.run(this.redis, 'read-log-events', keys, ids.slice(i, i + READ_BY_ID)),
      )) as StreamEntry[];
      for (const entry of entries) found.set(entry[0], decodeEntry(entry));
    }
    return found;
  }

  /**
   * One live run's events, oldest first, appended from `sinceMs` on (the run's creation, or later):
   * the one reader of a run's history (recovery, restore, platform answers given to a parked run).
   * A finished run's events may be in its record (lua/includes/run-record.lua): not read here. The
   * session's log is read a page at a time and only the run's own entries are decoded and kept,
   * so a reader holds one run's events, not its session's.
   */
  async runEvents(ref: SessionRef, runId: string, sinceMs: number): Promise<LoggedEvent[]> {
    const key = this.keys.events(ref);
    const events: LoggedEvent[] = [];
    let start = `${Math.max(0, Math.floor(sinceMs) - 1)}-0`;
    for (;;) {
      let entries: StreamEntry[];
      try {
        entries = await this.redis.xrange(key, start, '+', 'COUNT', MAX_PAGE);
      } catch (err) {
        throw failedCommand(err);
      }
      for (const entry of entries) if (fieldValue(entry[1], 'runId') === runId) events.push(decodeEntry(entry));
      if (entries.length < MAX_PAGE) return events;
      start = `(${entries[entries.length - 1][0]}`;
    }
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
   * The log is read in pages of at most `pageBytes` (one event when it is larger), one page at a
   * time: nothing more is read until the consumer has taken the page's last event, so a consumer
   * that waits for its socket holds at most one page (SPEC §10 "Event streams").
   */
  async *follow(ref: SessionRef, after: string | undefined, signal: AbortSignal, pageBytes = EVENT_PAGE_BYTES): AsyncIterable<Event> {
    if (after !== undefined) checkCursor(after);
    const key = this.keys.events(ref);
    if (signal.aborted) return;
    const conn = duplicateForBlocking(this.redis, 'events-follow');
    // Disconnecting rejects the pending XREAD at once instead of waiting out its BLOCK.
    const onAbort = () => closeConnection(conn);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let cursor = after ?? (await this.lastId(key));
      let markedAt = -Infinity;
      while (!signal.aborted) {
        let events: LoggedEvent[];
        try {
          // Marked before the page is read: a run folded from then on keeps its last entry in the
          // stream until the next fold, so that the wait below wakes for it. Best effort: a Redis
          // that refuses writes (full, a replica, no replica to write to) still serves the tail,
          // which then may wait out one block for a folded run's events; it tries again a block later.
          if (Date.now() - markedAt > FOLLOWED_MS / 3) {
            const marked = await this.redis.set(this.keys.followed(ref), '1', 'PX', FOLLOWED_MS).then(
              () => true,
              () => false,
            );
            markedAt = marked ? Date.now() : Date.now() - FOLLOWED_MS / 3 + FOLLOW_BLOCK_MS;
          }
          events = (await this.page(conn, ref, cursor, FOLLOW_PAGE_EVENTS, pageBytes)).events;
          // Caught up: wait for the log to move, then read pages again. What woke the wait is not
          // taken as it is: a run folded into its record (lua/includes/run-record.lua) meanwhile
          // has events before it that only a page reads.
          if (events.length === 0) await this.next(conn, key, cursor);
        } catch (err) {
          if (signal.aborted) return;
          throw failedCommand(err);
        }
        for (const event of events) {
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

  /** `exists` for many sessions, answers in order (one EXISTS each: sessions are in different Cluster slots). */
  async existing(refs: readonly SessionRef[]): Promise<boolean[]> {
    if (refs.length === 0) return [];
    const counts = await guard(() => Promise.all(refs.map((ref) => this.redis.exists(this.keys.session(ref)))));
    return counts.map((count) => count === 1);
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

  /**
   * Appends events of one run, in order, with one script call (lua/append-events.lua): what as many
   * `append` calls in a row would do, each event's outcome answered in its place (an event id, or
   * the typed error its own `append` would have thrown). Run-scoped events only, all of one run.
   * `trailMark`: left on the run once every event is written, for an end sent right behind them
   * (`RunLedger.finish`).
   */
  async appendAll(ref: SessionRef, inputs: readonly AppendInput[], trailMark?: string): Promise<Array<{ eventId: string } | EventsError>> {
    const runId = inputs[0]?.runId ?? '';
    if (runId === '') throw new InvalidEventError('appendAll without a runId');
    const args: (string | number)[] = [inputs.length];
    for (const input of inputs) {
      if (input.runId !== runId) throw new InvalidEventError(`appendAll across runs (${runId}, ${input.runId ?? ''})`);
      const ev = encodeEvent(input.type, input.data);
      const facts = Object.entries(ev.facts);
      args.push(input.type, runId, input.epoch ?? 0, ev.head, input.publish?.channel ?? '', input.publish?.message ?? '');
      args.push(ev.raws.length, facts.length, ...ev.raws.flat(), ...facts.flat());
    }
    if (trailMark !== undefined) args.push(trailMark);
    const raw = await guard(() => this.scripts.run(this.redis, 'append-events', this.keys.scriptKeys(ref, runId), args));
    if (!Array.isArray(raw) || raw.length !== inputs.length) throw new StoreCommandError(`unexpected script reply ${JSON.stringify(raw)}`);
    return raw.map((reply: unknown, n) => {
      const ctx = { runId, epoch: inputs[n].epoch ?? 0, type: inputs[n].type };
      // An error Redis raised inside the append (caught per event): a refusal for memory is the
      // store being full, as when it ends a script, not a bug.
      if (Array.isArray(reply) && reply[0] === LUA_CODES.raised)
        return raisedScriptError(new Error(String(reply[1]))) ?? caughtReplyError(String(reply[1]));
      try {
        return { eventId: String(checkReply(reply, ctx)[1]) };
      } catch (error) {
        if (error instanceof EventsError) return error;
        throw error;
      }
    });
  }

  /** One page through read-events-page.lua on `conn`; `more` says the log holds events after it. */
  private async page(
    conn: RedisClient,
    ref: SessionRef,
    after: string,
    limit: number,
    maxBytes: number,
  ): Promise<{ events: LoggedEvent[]; more: boolean }> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new InvalidArgumentError('limit', `must be an integer from 1 to ${MAX_PAGE}`);
    }
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new InvalidArgumentError('maxBytes', 'must be a positive integer');
    checkCursor(after);
    let reply: [more: number, entries: StreamEntry[]];
    try {
      const keys = this.keys.logReadKeys(ref);
      reply = (await this.scripts.run(conn, 'read-events-page', keys, [after, limit, maxBytes])) as typeof reply;
    } catch (err) {
      // Syntactically fine but out of range (e.g. past the largest id): still a bad cursor.
      if (err instanceof Error && /stream ID|start ID/i.test(err.message)) throw new InvalidCursorError(after);
      throw failedCommand(err);
    }
    return { events: reply[1].map(decodeEntry), more: reply[0] === 1 };
  }

  /** Waits up to FOLLOW_BLOCK_MS for an entry after `after` (or for one appended and folded at once). */
  private async next(conn: RedisClient, key: string, after: string): Promise<void> {
    await conn.xread('COUNT', 1, 'BLOCK', FOLLOW_BLOCK_MS, 'STREAMS', key, after);
  }

  /** The id of the last event appended (kept in the stream or not: a finished run's events may be in its record). */
  private async lastId(key: string): Promise<string> {
    const info = (await guard(() =>
      this.redis.xinfo('STREAM', key).catch((err: unknown) => {
        if (err instanceof Error && /no such key/i.test(err.message)) return [];
        throw err;
      }),
    )) as unknown[];
    const at = info.indexOf('last-generated-id');
    return at < 0 ? '0-0' : String(info[at + 1]);
  }
}

function checkCursor(after: string): void {
  if (!CURSOR_PATTERN.test(after)) throw new InvalidCursorError(after);
}

/** A field of a stream entry without decoding the entry (its data stays unparsed). */
function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
