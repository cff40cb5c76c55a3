/** The slice of a stream the spinner needs; `isTTY` decides whether it draws at all. */
export interface SpinnerStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;
/** Short waits stay silent: the spinner appears only once a wait has lasted this long. */
const SHOW_AFTER_MS = 1000;
const CLEAR_LINE = '\r\x1b[2K';

/**
 * A one-line spinner with elapsed seconds, drawn with plain ANSI on a terminal only: in pipes,
 * files and tests (not a TTY) it writes nothing, so captured output stays clean.
 */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private drawn = false;
  private frame = 0;

  constructor(
    private readonly stream: SpinnerStream,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts (or relabels) the spinner; `since` is when the wait began, so elapsed time spans several waits. */
  start(label: string, since: number = this.now()): void {
    this.stop();
    if (!this.stream.isTTY) return;
    this.timer = setInterval(() => {
      const elapsed = this.now() - since;
      if (elapsed < SHOW_AFTER_MS) return;
      this.frame = (this.frame + 1) % FRAMES.length;
      this.stream.write(`${CLEAR_LINE}${FRAMES[this.frame]} ${label} ${Math.floor(elapsed / 1000)}s`);
      this.drawn = true;
    }, FRAME_MS);
    // The spinner must never keep the process alive on its own.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.drawn) this.stream.write(CLEAR_LINE);
    this.drawn = false;
  }
}
