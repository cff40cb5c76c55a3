import type { LegJournal } from '@codemode/contracts';
import { methodOf } from './bridge-args';

/**
 * restartSafe runs (SPEC §6): what each leg does — the calls it made, the settlements it applied
 * in order, its clock reads and the timers it started — handed out with the leg's outcome so a
 * replay can re-run the leg exactly.
 */
export class LegRecorder {
  private current: LegJournal | undefined;
  /** When each dispatched timer is due (epoch ms), for the journal of the leg that parks with it open. */
  private readonly timerDue = new Map<string, number>();

  constructor(private readonly enabled: boolean) {}

  /** The current leg's journal (none for runs that are not restartSafe). */
  get journal(): LegJournal | undefined {
    return this.current;
  }

  /** A leg starts (or goes live after a replay): its journal starts empty. */
  startLeg(): void {
    this.current = this.enabled ? { calls: [], settled: [], clock: [], timers: [] } : undefined;
  }

  /** A rescued leg goes on: its journal continues (a fresh one if it had none). */
  continueLeg(journal: LegJournal | undefined): void {
    if (journal && this.enabled) this.current = journal;
    else this.startLeg();
  }

  call(id: string, argsJson: string): void {
    this.current?.calls.push([id, argsJson]);
  }

  settled(id: string, ok: boolean, payload: string): void {
    if (!this.current) return;
    const method = methodOf(id);
    // Yields and sleeps settle with null, successful tool calls are in their tool.settled event.
    const known = method === 'yield' || method === 'sleep' || (method === 'callValue' && ok);
    this.current.settled.push([id, ok, known ? null : payload]);
  }

  clockRead(now: number): void {
    this.current?.clock.push(now);
  }

  timerStarted(id: string, due: number): void {
    this.timerDue.set(id, due);
    this.current?.timers?.push([id, due]);
  }

  /** Due times of the dispatched timers still open (a parked run's image). */
  timers(): [string, number][] {
    return [...this.timerDue];
  }

  /** Goes on from a parked run's image: its open timers keep their due times. */
  loadTimers(timers: readonly [string, number][]): void {
    for (const [id, due] of timers) this.timerDue.set(id, due);
  }

  /** A call was settled or cancelled. */
  closed(id: string): void {
    this.timerDue.delete(id);
  }

  /** The leg parks with these calls open. */
  parked(open: string[]): void {
    if (!this.current) return;
    this.current.open = open;
    // Timers started while the run was parked (as slots freed) are due as well.
    const timers = (this.current.timers ??= []);
    const listed = new Set(timers.map(([id]) => id));
    for (const id of open) {
      const due = this.timerDue.get(id);
      if (due !== undefined && !listed.has(id)) timers.push([id, due]);
    }
  }
}
