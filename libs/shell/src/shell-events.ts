import type { ShellExitedData, ShellOutputData, ShellStartedData } from '@codemode/contracts';
import type { OutputStream } from './output-buffer';

/**
 * What a registry reports for the caller to append to the session's event log. The registry
 * never writes the log itself: routing and fencing belong to the worker that owns it.
 */
export type ShellEvent =
  | { type: 'shell.started'; data: ShellStartedData }
  | { type: 'shell.output'; data: ShellOutputData }
  /** `tail`: the last 2000 characters of its output, for the exit notification (SPEC §7); not logged. */
  | { type: 'shell.exited'; data: ShellExitedData; tail: string };

export type ShellEventListener = (event: ShellEvent) => void;

/** Largest `shell.output` text, so one event stays small in the log. */
export const OUTPUT_EVENT_MAX_CHARS = 8 * 1024;
/** Output arriving within this window is coalesced into one event. */
export const OUTPUT_EVENT_COALESCE_MS = 100;

/**
 * Coalesces one session's output into `shell.output` events of at most 8 KiB, flushed every
 * 100 ms or when a full event is ready. The recorded total is capped at the session's
 * `maxOutputChars`: a command that prints forever must not grow the event log forever; what is
 * left out is counted in `shell.exited.droppedChars`.
 */
export class OutputEventRecorder {
  private stream: OutputStream = 'stdout';
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  private recorded = 0;
  dropped = 0;

  constructor(
    private readonly emit: ShellEventListener,
    private readonly ids: { sessionId: string; scope: string },
    private readonly budgetChars: number,
  ) {}

  append(stream: OutputStream, text: string): void {
    if (!text) return;
    const room = Math.max(0, this.budgetChars - this.recorded - this.pending.length);
    const kept = text.slice(0, room);
    this.dropped += text.length - kept.length;
    if (!kept) return;
    if (stream !== this.stream) this.flush();
    this.stream = stream;
    this.pending += kept;
    while (this.pending.length >= OUTPUT_EVENT_MAX_CHARS) this.emitChunk(OUTPUT_EVENT_MAX_CHARS);
    if (this.pending && !this.timer) {
      this.timer = setTimeout(() => this.flush(), OUTPUT_EVENT_COALESCE_MS);
      this.timer.unref();
    }
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.pending) this.emitChunk(OUTPUT_EVENT_MAX_CHARS);
  }

  private emitChunk(max: number): void {
    let size = Math.min(max, this.pending.length);
    const code = this.pending.charCodeAt(size - 1);
    if (size < this.pending.length && code >= 0xd800 && code <= 0xdbff) size -= 1; // keep surrogate pairs whole
    const text = this.pending.slice(0, size);
    this.pending = this.pending.slice(size);
    this.recorded += text.length;
    this.emit({ type: 'shell.output', data: { ...this.ids, stream: this.stream, text } });
  }
}
