import type { Event } from '@codemode/contracts';
import { authHeaders } from './api.js';

export interface StreamHandlers {
  onEvent(event: Event): void;
  /** `live` once the stream is open; `retrying` while it is being reopened. */
  onState?(state: 'live' | 'retrying', detail?: string): void;
}

const RETRY_MS = [500, 1000, 2000, 5000];

/**
 * Follows `GET …/events` as Server-Sent Events. EventSource cannot send an `Authorization`
 * header, so this reads the stream with fetch and parses it here; a closed or failed stream is
 * reopened after the last event seen, so nothing is skipped or shown twice. Stops on `signal`.
 */
export async function followEvents(
  sessionPath: string,
  after: string | undefined,
  signal: AbortSignal,
  handlers: StreamHandlers,
): Promise<void> {
  let cursor = after;
  let attempt = 0;
  while (!signal.aborted) {
    try {
      const query = cursor ? `?after=${encodeURIComponent(cursor)}` : '';
      const res = await fetch(`${sessionPath}/events${query}`, { headers: { accept: 'text/event-stream', ...authHeaders() }, signal });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      handlers.onState?.('live');
      attempt = 0;
      for await (const event of parseSse(res.body, signal)) {
        cursor = event.id;
        handlers.onEvent(event);
      }
    } catch (error) {
      if (signal.aborted) return;
      handlers.onState?.('retrying', error instanceof Error ? error.message : String(error));
    }
    const wait = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];
    attempt += 1;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

async function* parseSse(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Event> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const stop = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (data) yield JSON.parse(data) as Event;
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
