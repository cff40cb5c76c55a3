import { writeSync } from 'node:fs';
import pino from 'pino';

/** How long a line may wait for the lines after it while they come fast (see BatchedLogDestination). */
export const LOG_BATCH_MS = 20;
/** Characters (UTF-16 units) of waiting lines that go out at once, without waiting longer (below sonic-boom's 16 KiB write). */
export const LOG_BATCH_CHARS = 8 * 1024;

/** What a batch is handed to: pino's own destination (sonic-boom), writing asynchronously. */
type LogStream = ReturnType<typeof pino.destination>;

/** pino's number for `warn`: a line at this level or above is written at once. */
const WARN_LEVEL = 40;
/** A destination holding this is told each line's level (`lastLevel`) by pino before its write. */
const PINO_METADATA: unique symbol = Symbol.for('pino.metadata') as typeof PINO_METADATA;

/**
 * The logger's destination: lines go to `stream` (stdout) in batches while they come fast. At load
 * a process logs a line per request or per cell (SPEC §19); handed over one at a time, each line
 * cost its own write on libuv's thread pool and the wake-ups around it: ~72 µs of CPU per line on
 * these machines, ~30 µs in batches (docs/benchmarks.md, "Log lines in batches").
 *
 * A line logged when no window is open goes out at once and opens a window of LOG_BATCH_MS: lines
 * logged in it wait for its end (or until LOG_BATCH_CHARS of them wait), and go out together,
 * opening the next window. So a quiet process writes each line as it comes, and a busy one writes
 * once per window. A warning or an error goes out at once, with the lines before it: it may be what
 * an operator, or a test, is waiting for. A window's timer keeps the process alive, so one that
 * runs out of work writes its last lines before it exits; one that exits at once (`process.exit`,
 * a fatal error) writes the waiting lines synchronously on `exit`, after what the stream holds. A
 * batch the stream is still writing then may land after them, or not at all, as with pino's own
 * asynchronous destination.
 */
export class BatchedLogDestination {
  readonly [PINO_METADATA] = true;
  /** The level of the line being written (set by pino). */
  lastLevel = 0;
  private waiting = '';
  private window: NodeJS.Timeout | undefined;

  /** `fd`: where the lines go (stdout; a test's file), written by `stream` (pino's destination on it). */
  constructor(
    private readonly fd = 1,
    private readonly batchMs = LOG_BATCH_MS,
    private readonly stream: LogStream = pino.destination({ dest: fd, sync: false }),
  ) {
    process.once('exit', () => this.writeAtExit());
  }

  write(line: string): void {
    this.waiting += line;
    if (this.window === undefined || this.lastLevel >= WARN_LEVEL || this.waiting.length >= LOG_BATCH_CHARS) this.handOver();
    this.window ??= setTimeout(() => this.closeWindow(), this.batchMs);
  }

  /**
   * pino's `logger.flush(cb)`: the waiting lines handed over, then the stream's own flush, which
   * calls back at once (it keeps nothing back, `minLength` 0), not once they are written.
   */
  flush(cb?: (err?: Error) => void): void {
    this.handOver();
    this.stream.flush(cb);
  }

  /**
   * Writes every line now: what the stream holds (not a write it has under way), then the waiting
   * ones, by this destination itself (handed over, they would start an asynchronous write that the
   * stream's `flushSync` does not wait for). No window stays open after it.
   */
  flushSync(): void {
    clearTimeout(this.window);
    this.window = undefined;
    const lines = this.waiting;
    this.waiting = '';
    try {
      this.stream.flushSync();
    } finally {
      if (lines !== '') writeWhole(this.fd, Buffer.from(lines));
    }
  }

  /** On `exit`: what can still be written. A stdout that is gone (EPIPE, closed) or a stream already ended takes nothing more. */
  private writeAtExit(): void {
    try {
      this.flushSync();
    } catch {
      // Nothing is left to write to; an exception here would only hide the exit's own cause.
    }
  }

  /** The window's end: what waited goes out and the next window opens; none opens after an empty one. */
  private closeWindow(): void {
    this.window = undefined;
    if (this.waiting === '') return;
    this.handOver();
    this.window = setTimeout(() => this.closeWindow(), this.batchMs);
  }

  private handOver(): void {
    if (this.waiting === '') return;
    const lines = this.waiting;
    this.waiting = '';
    this.stream.write(lines);
  }
}

/** What `Atomics.wait` sleeps on between the tries of a write the pipe refused for now (EAGAIN), as sonic-boom does. */
const SLEEP_CELL = new Int32Array(new SharedArrayBuffer(4));
const EAGAIN_TRIES = 1000;

/** Writes all of `bytes` to `fd` synchronously, trying again for a while where a full pipe says EAGAIN. */
function writeWhole(fd: number, bytes: Buffer): void {
  let left = bytes;
  for (let tries = 0; left.length > 0;) {
    try {
      left = left.subarray(writeSync(fd, left));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries > EAGAIN_TRIES) throw err;
      Atomics.wait(SLEEP_CELL, 0, 0, 1);
    }
  }
}
