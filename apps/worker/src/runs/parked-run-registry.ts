import type { Limits, SessionRef } from '@codemode/contracts';
import type { RunToolHost } from '../tools/run-tool-host';

/** What the worker keeps beside a parked VM to resume, expire or abort it. */
export interface ParkedRun {
  ref: SessionRef;
  runId: string;
  epoch: number;
  limits: Limits;
  restartSafe: boolean;
  awaitResults: boolean;
  /** Output bytes already returned by earlier calls of this run (SPEC: shared across waits). */
  priorOutputBytes: number;
  expiresAt: number;
  /** The run's tool host: its catalog, buffered store writes and counters live across waits. */
  host: RunToolHost;
  /** It holds a place in its tenant's parked-run quota (SPEC §10), given back when the run ends. */
  holdsParkedQuota?: boolean;
  /** Its image is in Redis (SPEC §12): it can be handed over or evicted instead of lost. */
  imaged?: boolean;
  /** Its image's size: what it counts against its tenant's parked bytes once its VM left memory (SPEC §10). */
  imageBytes?: number;
}

/**
 * The worker's index of its parked runs, with ONE timer armed for the earliest expiry (not one
 * per run). A run being resumed is taken out, so it cannot expire mid-resume; parking it again
 * puts it back with a fresh expiry.
 */
export class ParkedRunRegistry {
  private readonly runs = new Map<string, ParkedRun>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  constructor(
    private readonly onExpire: (run: ParkedRun) => void,
    private readonly now: () => number = Date.now,
  ) {}

  park(run: ParkedRun): void {
    this.runs.set(run.runId, run);
    if (run.expiresAt < this.armedFor) this.arm();
  }

  get(runId: string): ParkedRun | undefined {
    return this.runs.get(runId);
  }

  /** Removes and returns the run (resume, abort, loss); its expiry no longer applies. */
  take(runId: string): ParkedRun | undefined {
    const run = this.runs.get(runId);
    if (run) this.runs.delete(runId);
    return run;
  }

  runIds(): IterableIterator<string> {
    return this.runs.keys();
  }

  get size(): number {
    return this.runs.size;
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
    let earliest = Infinity;
    for (const run of this.runs.values()) earliest = Math.min(earliest, run.expiresAt);
    if (earliest === Infinity) return;
    this.armedFor = earliest;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, earliest - this.now()));
    this.timer.unref();
  }

  private expireDue(): void {
    const now = this.now();
    for (const run of [...this.runs.values()]) {
      if (run.expiresAt <= now) {
        this.runs.delete(run.runId);
        this.onExpire(run);
      }
    }
    this.arm();
  }
}
