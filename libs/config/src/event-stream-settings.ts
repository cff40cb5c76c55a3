import { readRule } from './history-settings';
import type { LimitRule } from './limit-rules';

/**
 * SPEC §10 "Event streams": the most one SSE connection holds in the API, the page the log is
 * read in, and how long a consumer may stay behind before it is disconnected.
 */
export interface EventStreamSettings {
  /** Bytes one stream holds at most: the page read from the log plus what waits on its socket. */
  readonly bufferBytes: number;
  /**
   * Bytes of stored events per page read from the log (one event when it is larger). A quarter of
   * the buffer: the page as Redis sent it, its decoded events, and the one event waiting on the
   * socket fit in the rest.
   */
  readonly pageBytes: number;
  /** A consumer whose socket has not drained for this long is disconnected; it resumes with `Last-Event-ID`. */
  readonly maxLagMs: number;
}

/** SPEC §10: at most 8 MiB buffered for one SSE connection. */
export const EVENT_STREAM_BUFFER_BYTES = 8 * 1024 * 1024;
export const EVENT_PAGE_BYTES = EVENT_STREAM_BUFFER_BYTES / 4;

/** SPEC §10: 30 s behind the bound; tests set less. */
const MAX_LAG_RULE: LimitRule = { defaultValue: 30_000, min: 100, max: 3_600_000, env: 'CODEMODE_STREAM_MAX_LAG_MS' };

type Env = Record<string, string | undefined>;

export function readEventStreamSettings(env: Env): EventStreamSettings {
  return { bufferBytes: EVENT_STREAM_BUFFER_BYTES, pageBytes: EVENT_PAGE_BYTES, maxLagMs: readRule(env, MAX_LAG_RULE) };
}
