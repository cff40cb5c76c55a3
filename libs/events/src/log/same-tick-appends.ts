import type { SessionRef } from '@codemode/contracts';
import type { AppendInput, EventLog } from './event-log';

/**
 * Events per script call: one call holds Redis for its whole batch, so a batch stays short. (Its
 * bytes are what the same appends would send pipelined, and a run's events add up to at most its
 * history cap, CODEMODE_RUN_HISTORY_MAX_BYTES.)
 */
export const MAX_BATCH_EVENTS = 16;

interface Pending {
  input: AppendInput;
  resolve: (value: { eventId: string }) => void;
  reject: (error: unknown) => void;
}

/**
 * One run's event appends, written together when they are asked for in the same turn of the event
 * loop: the tool calls a cell starts (or that settle) at once cost one script call
 * (`EventLog.appendAll`) instead of one each. Each caller's promise settles as its own `append`
 * would, once the script has answered, so an event is in the log before its caller goes on (the
 * guest never sees an outcome the log does not hold), and the events keep the order they were
 * asked in. The turn ends at `setImmediate`: a sandbox thread's bridge messages are delivered one
 * callback each, with microtasks drained in between, so a microtask would batch nothing.
 */
export class SameTickAppends {
  private pending: Pending[] = [];

  constructor(
    private readonly log: Pick<EventLog, 'append' | 'appendAll'>,
    private readonly ref: SessionRef,
  ) {}

  /** No append waits for the end of its turn: a write sent now goes after every one asked for before. */
  get idle(): boolean {
    return this.pending.length === 0;
  }

  append(input: AppendInput): Promise<{ eventId: string }> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ input, resolve, reject });
    });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    for (let from = 0; from < pending.length; from += MAX_BATCH_EVENTS) this.write(pending.slice(from, from + MAX_BATCH_EVENTS));
  }

  private write(batch: Pending[]): void {
    if (batch.length === 1) {
      const [one] = batch;
      this.log.append(this.ref, one.input).then(one.resolve, one.reject);
      return;
    }
    this.log
      .appendAll(
        this.ref,
        batch.map((p) => p.input),
      )
      .then(
        (outcomes) => outcomes.forEach((outcome, n) => (outcome instanceof Error ? batch[n].reject(outcome) : batch[n].resolve(outcome))),
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      );
  }
}
