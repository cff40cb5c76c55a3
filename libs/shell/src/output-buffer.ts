export type OutputStream = 'stdout' | 'stderr';

/** Characters of the newest output shown as `tail` in answers. */
export const TAIL_CHARS = 2000;

interface PendingChunk {
  stream: OutputStream;
  text: string;
}

/** The last `max` characters, never splitting a surrogate pair. */
export function tailOf(text: string, max = TAIL_CHARS): string {
  if (text.length <= max) return text;
  let start = text.length - max;
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start += 1;
  return text.slice(start);
}

/**
 * Output of one process session, under two caps (SPEC §7):
 * - `aggregated`, everything `log` can read, keeps the newest `maxOutputChars`;
 * - the pending buffer, what the next `poll` returns, holds at most `pendingMaxOutputChars` per
 *   stream and drops that stream's oldest text first, so a chatty stderr cannot push stdout out.
 */
export class OutputBuffer {
  private aggregatedText = '';
  private pending: PendingChunk[] = [];
  private readonly pendingChars: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  private readonly pendingCap: number;
  /** Every character ever appended, kept or not. */
  totalChars = 0;
  /** Some output was dropped by either cap. */
  truncated = false;
  /** Output was dropped from the pending buffer since the last drain. */
  pendingDropped = false;

  constructor(
    readonly maxOutputChars: number,
    pendingMaxOutputChars: number,
  ) {
    this.pendingCap = Math.min(pendingMaxOutputChars, maxOutputChars);
  }

  get aggregated(): string {
    return this.aggregatedText;
  }

  get tail(): string {
    return tailOf(this.aggregatedText);
  }

  get hasPending(): boolean {
    return this.pending.length > 0 || this.pendingDropped;
  }

  append(stream: OutputStream, text: string): void {
    if (!text) return;
    this.totalChars += text.length;
    this.pending.push({ stream, text });
    this.pendingChars[stream] += text.length;
    if (this.pendingChars[stream] > this.pendingCap) this.dropOldestPending(stream);
    const joined = this.aggregatedText + text;
    this.aggregatedText = tailOf(joined, this.maxOutputChars);
    if (this.aggregatedText.length < joined.length) this.truncated = true;
  }

  /** Takes the pending output in arrival order, with whether some of it was dropped. */
  drain(): { output: string; dropped: boolean } {
    const output = this.pending.map((chunk) => chunk.text).join('');
    const dropped = this.pendingDropped;
    this.pending = [];
    this.pendingChars.stdout = 0;
    this.pendingChars.stderr = 0;
    this.pendingDropped = false;
    return { output, dropped };
  }

  private dropOldestPending(stream: OutputStream): void {
    this.truncated = true;
    this.pendingDropped = true;
    let overflow = this.pendingChars[stream] - this.pendingCap;
    for (let i = 0; i < this.pending.length && overflow > 0;) {
      const chunk = this.pending[i];
      if (chunk.stream !== stream) {
        i += 1;
        continue;
      }
      if (chunk.text.length <= overflow) {
        overflow -= chunk.text.length;
        this.pendingChars[stream] -= chunk.text.length;
        this.pending.splice(i, 1);
        continue;
      }
      const kept = tailOf(chunk.text, chunk.text.length - overflow);
      this.pendingChars[stream] -= chunk.text.length - kept.length;
      chunk.text = kept;
      overflow = 0;
    }
  }
}
