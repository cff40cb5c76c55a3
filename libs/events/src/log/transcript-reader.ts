import type { SessionRef, TranscriptEntry } from '@codemode/contracts';
import type { KeySpace } from '../platform/keys';
import { execMulti, type RedisClient } from '../platform/redis';
import { decodeEntry, type LoggedEvent } from './event-encoding';
import { entryOfMark, readTranscriptElement, type TranscriptElement } from './projections/transcript-marks';

/** Events fetched per pipelined round trip: bounds what one reply buffers. */
const EVENTS_PER_ROUND_TRIP = 256;

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

  /** The events the marks name (an `exec.rejected` is named twice, fetched once). */
  private async eventsNamed(ref: SessionRef, elements: TranscriptElement[]): Promise<Map<string, LoggedEvent>> {
    const ids = [...new Set(elements.flatMap((element) => ('mark' in element ? [element.mark.eventId] : [])))];
    const stream = this.keys.events(ref);
    const events = new Map<string, LoggedEvent>();
    for (let i = 0; i < ids.length; i += EVENTS_PER_ROUND_TRIP) {
      const chunk = ids.slice(i, i + EVENTS_PER_ROUND_TRIP);
      const replies = (await execMulti(chunk.reduce((p, id) => p.xrange(stream, id, id), this.redis.pipeline()))) as Array<
        Array<[string, string[]]>
      >;
      for (const reply of replies) {
        if (reply[0]) events.set(reply[0][0], decodeEntry(reply[0]));
      }
    }
    return events;
  }
}
