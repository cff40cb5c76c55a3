/**
 * How long a watchdog that fired while the thread executes another run's code (or its own
 * housekeeping) keeps deferring before it blames its own run: longer than any budget (60 s).
 */
export const MAX_DEFERRED_OVERRUN_MS = 65_000;

/**
 * The watchdog of one leg (SPEC §10). Armed for the leg's budget by each of its `watch` messages
 * (and disarmed while it waits idle for the host), it fires `graceMs` past it. Only the run whose
 * guest code is executing then can be stuck in a native builtin: if the thread is executing
 * another run (whose own watchdog judges it) or idling between jobs, it looks again every
 * `graceMs`, and blames its own run once that one executes or after MAX_DEFERRED_OVERRUN_MS.
 */
export class LegWatchdog {
  private timer: NodeJS.Timeout | undefined;
  private deferredSince: number | undefined;

  constructor(
    private readonly graceMs: number,
    private readonly executingOwnCode: () => boolean,
    private readonly overran: () => void,
  ) {}

  /** Arms it for a budget of `timeoutMs` from now, or disarms it (undefined). */
  arm(timeoutMs: number | undefined): void {
    clearTimeout(this.timer);
    // A new budget defers afresh: time deferred under an earlier one must not blame this run at its first look.
    this.deferredSince = undefined;
    this.timer = timeoutMs === undefined ? undefined : setTimeout(() => this.fire(), timeoutMs + this.graceMs);
  }

  /** The leg ended or left the thread. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private fire(): void {
    if (!this.executingOwnCode()) {
      const now = performance.now();
      this.deferredSince ??= now;
      if (now - this.deferredSince < MAX_DEFERRED_OVERRUN_MS) {
        this.timer = setTimeout(() => this.fire(), this.graceMs);
        return;
      }
    }
    this.overran();
  }
}
