/** One dispatched server-sent event (the fields this API sends: id, event, data). */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * Incremental parser of a `text/event-stream` body (WHATWG HTML §9.2.6, the parts a client of
 * this API needs): chunks may split lines, and even a CRLF pair, anywhere. Comment lines (the
 * server's `: ping` heartbeats) and `retry:` are ignored; a message is dispatched on a blank line
 * and only when it carried data.
 */
export class SseParser {
  private buffer = '';
  private pendingCr = false;
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private hasData = false;

  /** Feeds decoded text; returns the messages completed by it. */
  push(chunk: string): SseMessage[] {
    const out: SseMessage[] = [];
    let text = chunk;
    // A CR ending the previous chunk already ended its line; a LF opening this one belongs to it.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i += 1) {
      const ch = this.buffer[i];
      if (ch !== '\n' && ch !== '\r') continue;
      this.line(this.buffer.slice(start, i), out);
      if (ch === '\r') {
        if (i + 1 === this.buffer.length) this.pendingCr = true;
        else if (this.buffer[i + 1] === '\n') i += 1;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.hasData) out.push({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      this.hasData = false;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'event') {
      this.event = value;
    } else if (field === 'id' && !value.includes('\0')) {
      this.id = value;
    }
  }
}

/** Parses a byte stream (a response body) into messages, decoding UTF-8 across chunk boundaries. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
}
