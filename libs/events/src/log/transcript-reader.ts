import type { SessionRef, TranscriptEntry } from '@codemode/contracts';
import type { KeySpace } from '../platform/keys';
import { execMulti, type RedisClient } from '../platform/redis';
import { decodeEntry, type LoggedEvent } from './event-encoding';
import type { EventLog } from './event-log';
import { entryOfMark, readTranscriptElement, type TranscriptElement } from './projections/transcript-marks';

/**
 * Named events are read in windows: one XRANGE from a mark's event to the event of the mark
 * MARKS_PER_WINDOW - 1 further on, at most WINDOW_EVENTS entries. A trivial exec has three events,
 * two of them named, so a window takes eight marks in one command; events a window missed (runs
 * with many tool events between their marks, and finished runs' events, which their records hold:
 * lua/includes/run-record.lua) are read by id (EventLog.loggedAt).
 */
const MARKS_PER_WINDOW = 8;
const WINDOW_EVENTS = 16;
/** Commands per pipelined round trip: bounds what one reply buffers. */
const COMMANDS_PER_ROUND_TRIP = 64;

/**
 * The session's transcript, derived from its log: the transcript list holds one mark per entry
 * (lua/includes/transcript.lua), and each entry is built from the event its mark names, fetched
 * by id. Lists written before hold the entries themselves, served as they are; both kinds sit in
 * one list in append order, so each entry is served once, in order (docs/contract.md, upgrade).
 */
export class TranscriptReader {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly log: EventLog,
  ) {}

  /** The transcript in log order; null when the session was never created. */
  async read(ref: SessionRef): Promise<TranscriptEntry[] | null> {
    const multi = this.redis.multi().exists(this.keys.session(ref)).lrange(this.keys.transcript(ref), 0, -1);
    const [exists, lines] = (await execMulti(multi)) as [number, string[]];
    if (exists !== 1) return null;
    const elements = lines.map(readTranscriptElement);
    const events = await this.eventsNamed(ref, elements);
    const entries: TranscriptEntry[] = [];
    for (const element of elements) {
      if ('entry' in element) {
        entries.push(element.entry);
        continue;
      }
      // Retention cut the event after the list was read: its mark goes with it.
      const event = events.get(element.mark.eventId);
      if (event) entries.push(entryOfMark(element.mark, event));
    }
    return entries;
  }

  /** The events the marks name (an `exec.rejected` is named twice, read once). */
  private async eventsNamed(ref: SessionRef, elements: TranscriptElement[]): Promise<Map<string, LoggedEvent>> {
    const ids = [...new Set(elements.flatMap((element) => ('mark' in element ? [element.mark.eventId] : [])))];
    const windows: [from: string, to: string, count: number][] = [];
    for (let i = 0; i < ids.length; i += MARKS_PER_WINDOW) {
      windows.push([ids[i], ids[Math.min(i + MARKS_PER_WINDOW, ids.length) - 1], WINDOW_EVENTS]);
    }
    const events = new Map<string, LoggedEvent>();
    const wanted = new Set(ids);
    await this.readRanges(ref, windows, wanted, events);
    // Events a window missed: a run with many events between its marks, or one folded into its record.
    const missed = ids.filter((id) => !events.has(id));
    for (const [id, event] of await this.log.loggedAt(ref, missed)) events.set(id, event);
    return events;
  }

  private async readRanges(
    ref: SessionRef,
    ranges: [from: string, to: string, count: number][],
    wanted: ReadonlySet<string>,
    into: Map<string, LoggedEvent>,
  ): Promise<void> {
    const stream = this.keys.events(ref);
    for (let i = 0; i < ranges.length; i += COMMANDS_PER_ROUND_TRIP) {
      const pipeline = this.redis.pipeline();
      for (const [from, to, count] of ranges.slice(i, i + COMMANDS_PER_ROUND_TRIP)) pipeline.xrange(stream, from, to, 'COUNT', count);
      const replies = (await execMulti(pipeline)) as Array<Array<[string, string[]]>>;
      for (const entry of replies.flat()) {
        if (wanted.has(entry[0])) into.set(entry[0], decodeEntry(entry));
      }
    }
  }
}
