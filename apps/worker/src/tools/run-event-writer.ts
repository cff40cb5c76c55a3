import { randomBytes } from 'node:crypto';
import {
  isStoreUnavailable,
  MAX_BATCH_EVENTS,
  RUN_HISTORY_LIMIT_MESSAGE,
  RunHistoryLimitError,
  SameTickAppends,
  type AppendInput,
  type EventLog,
} from '@codemode/events';
import { ToolCallError } from './tool-call-error';
import type { ToolRun } from './tool-run';

/** What a run fails with when a read's events could not be written for another cause than Redis being unreachable or full, or the cap. */
export const EVENTS_UNRECORDED_MESSAGE = "code mode could not record a tool call's events; the run was stopped. Start a new run.";

/**
 * How long a read's events may wait for more before they are written: a cell that reads in a loop
 * writes its reads' events a batch at a time (one script call and one Redis round trip for up to
 * MAX_BATCH_EVENTS events, SameTickAppends' batch) instead of a call each, and the event feed has
 * them within this much of the read all the same.
 */
export const TRAIL_HOLD_MS = 20;

/**
 * What held events may keep of their calls (a restart-safe run's inputs and values, `keptBytes`)
 * before they are sent: a held batch is one script call of about this much at most, so it holds
 * Redis no longer than one such append does, whatever the reads return.
 */
export const TRAIL_HOLD_BYTES = 64 * 1024;

/**
 * Trailed events not yet in the log, and what they keep of their calls, past which a read's guest
 * waits for them (a slow Redis): what the worker holds for a run stays bounded, whatever its cell
 * reads.
 */
export const TRAIL_BACKLOG_EVENTS = 256;
export const TRAIL_BACKLOG_BYTES = 1024 * 1024;

/** What a trailed event keeps of its call beyond its fixed fields: in a restart-safe run's log, its input or its value. */
function keptBytes(input: AppendInput): number {
  if (input.type === 'tool.called') return 'input' in input.data ? input.data.inputBytes : 0;
  if (input.type === 'tool.settled') return 'result' in input.data && 'resultBytes' in input.data ? input.data.resultBytes : 0;
  return 0;
}

/**
 * Writes one run's events from its tool calls (`tool.called`, `tool.settled`, `tool.blocked`):
 * those asked for in the same tick go in one script call, and at the history cap (SPEC §6) the
 * run is stopped and the call rejects with the cap's message.
 *
 * Events recorded after their call answered (`trail`: a read made in this process) are written
 * while the guest goes on, held up to TRAIL_HOLD_MS, MAX_BATCH_EVENTS or TRAIL_HOLD_BYTES so that
 * reads in a row share an append. The log keeps its order all the same: trailed events are written
 * one batch after another, and every other write of the run first sends what is held and waits
 * until it landed (`readyToWrite`); if some could not be written, the run stops, no later event of
 * it is written, and its next write rejects. So nothing the run records after a read (another
 * call, an approval, a saved value, its park or end) is in the log without it. The one write that
 * may go before they landed is the run's end, sent right behind them and written only if they did
 * (`sendMarkedTrail`).
 */
export class RunEventWriter {
  private readonly appends: SameTickAppends;
  private limitReached = false;
  /** The trailed batches sent, each written once the one before landed; settles (never rejects) once all did. */
  private trailing: Promise<void> | undefined;
  /** Trailed batches sent and not answered yet. */
  private sending = 0;
  /** Trailed events not sent yet, what they keep of their calls (keptBytes), and the timer that sends them. */
  private held: AppendInput[] = [];
  private heldBytes = 0;
  private holdTimer: NodeJS.Timeout | undefined;
  /** Trailed events not in the log yet (held, or sent and not answered), and what they keep. */
  private backlog = { events: 0, bytes: 0 };
  /** Why events of the run could not be written (not the history cap), trailed or not: the run stopped on it. */
  private writeFailure: Error | undefined;

  constructor(
    private readonly log: Pick<EventLog, 'append' | 'appendAll'>,
    private readonly run: Pick<ToolRun, 'ref'>,
    private readonly stopRun: () => void,
  ) {
    this.appends = new SameTickAppends(log, run.ref);
  }

  /** A write of this run was refused at the history cap: the run fails with it, whatever the cell did. */
  get historyFull(): boolean {
    return this.limitReached;
  }

  /** The run's events met Redis unreachable or full: what the run stopped on (its store failure), else undefined. */
  get storeFailure(): Error | undefined {
    return isStoreUnavailable(this.writeFailure) ? this.writeFailure : undefined;
  }

  /** The run's events could not be written for another cause: the run stopped, and fails with EVENTS_UNRECORDED_MESSAGE. */
  get unrecorded(): boolean {
    return this.writeFailure !== undefined && !isStoreUnavailable(this.writeFailure);
  }

  /**
   * Events that could not be written stop the run as trailed ones do, whatever the cause: a run
   * never ends `completed` without an event its guest was answered after.
   * @throws ToolCallError with the cap's message when the run's history is full
   * @throws what `refusal` answers when these or earlier events could not be written
   */
  async append(input: AppendInput): Promise<void> {
    await this.readyToWrite();
    try {
      await this.appends.append(input);
    } catch (error) {
      if (error instanceof RunHistoryLimitError) throw this.capReached();
      this.writeFailed(error);
      throw this.refusal() ?? error;
    }
  }

  /**
   * Writes `inputs`, in one append with the trailed events held beside them, once the trailed
   * events before them landed, without holding the caller: a call that changes nothing has
   * answered, and its guest goes on meanwhile. Not written once the run was stopped on earlier
   * ones; at the cap, or when they cannot be written, the run stops. Resolves at once, unless the
   * run's trailed events not in the log yet pass TRAIL_BACKLOG_EVENTS or TRAIL_BACKLOG_BYTES: then
   * once they all are (never rejects).
   */
  trail(inputs: readonly AppendInput[]): Promise<void> {
    const bytes = inputs.reduce((sum, input) => sum + keptBytes(input), 0);
    this.held.push(...inputs);
    this.heldBytes += bytes;
    this.backlog.events += inputs.length;
    this.backlog.bytes += bytes;
    if (this.held.length >= MAX_BATCH_EVENTS || this.heldBytes >= TRAIL_HOLD_BYTES) this.send();
    else this.holdTimer ??= setTimeout(() => this.send(), TRAIL_HOLD_MS);
    const piledUp = this.backlog.events > TRAIL_BACKLOG_EVENTS || this.backlog.bytes > TRAIL_BACKLOG_BYTES;
    return piledUp ? this.landed() : Promise.resolve();
  }

  /** Sends what is held, and resolves once every trailed event landed, or the run was stopped on them; never rejects. */
  landed(): Promise<void> {
    this.send();
    return this.trailing ?? Promise.resolve();
  }

  /**
   * Resolves once the trailed events landed: any other write of the run (in the log or not) comes
   * after them.
   * @throws ToolCallError with the cap's message, or with EVENTS_UNRECORDED_MESSAGE, or the store's
   * error (Redis unreachable or full) when the run was stopped on them
   */
  async readyToWrite(): Promise<void> {
    await this.landed();
    this.refuseIfStopped();
  }

  /** @throws as `readyToWrite`, at once: a call that would trail its events is not made once the run was stopped on them. */
  refuseIfStopped(): void {
    const refusal = this.refusal();
    if (refusal) throw refusal;
  }

  /** What a write of a run stopped on its events rejects with: the cap's message, the store's error, or EVENTS_UNRECORDED_MESSAGE. */
  private refusal(): Error | undefined {
    if (this.limitReached) return new ToolCallError(RUN_HISTORY_LIMIT_MESSAGE);
    if (this.writeFailure === undefined) return undefined;
    return isStoreUnavailable(this.writeFailure) ? this.writeFailure : new ToolCallError(EVENTS_UNRECORDED_MESSAGE);
  }

  /**
   * Sends what is held now, as one append that leaves the returned mark on the run once all of it
   * is written: the run's end can then go right behind it in the same socket write, fenced by the
   * mark (`RunLedger.finish`: TrailNotLandedError when they did not all land), rather than a round
   * trip after it. Only when that append is the run's last write before its end: undefined, and
   * nothing sent, when nothing is held, a batch of held events is not answered yet, another append
   * of the run waits for the end of its turn (SameTickAppends), more is held than one append takes,
   * or the run was stopped; the end then waits for `landed`. (An append of the run sent and not
   * answered yet is ahead of this one on the connection.)
   */
  sendMarkedTrail(): string | undefined {
    if (this.held.length === 0 || this.held.length > MAX_BATCH_EVENTS) return undefined;
    if (this.sending > 0 || !this.appends.idle || this.stopped) return undefined;
    const mark = randomBytes(6).toString('base64url');
    const { inputs, bytes } = this.takeHeld();
    this.sending += 1;
    // Sent now, not at the end of a chain: the end is sent after it on the same connection.
    const written = this.log.appendAll(this.run.ref, inputs, mark).then(
      (outcomes) => {
        const refused = outcomes.find((outcome) => outcome instanceof Error);
        if (refused !== undefined) this.stopOn(refused);
      },
      (error: unknown) => this.stopOn(error),
    );
    this.trailing = written.finally(() => this.sent(inputs.length, bytes));
    return mark;
  }

  /** The held events, as the next batch: written once the batch before it landed. */
  private send(): void {
    if (this.held.length === 0) {
      this.clearHoldTimer();
      return;
    }
    const { inputs, bytes } = this.takeHeld();
    this.sending += 1;
    this.trailing = (this.trailing ?? Promise.resolve()).then(async () => {
      try {
        if (this.stopped) return;
        const outcomes = await Promise.allSettled(inputs.map((input) => this.appends.append(input)));
        const refused = outcomes.find((outcome) => outcome.status === 'rejected');
        if (refused !== undefined) this.stopOn(refused.reason);
      } finally {
        this.sent(inputs.length, bytes);
      }
    });
  }

  private takeHeld(): { inputs: AppendInput[]; bytes: number } {
    this.clearHoldTimer();
    const taken = { inputs: this.held, bytes: this.heldBytes };
    this.held = [];
    this.heldBytes = 0;
    return taken;
  }

  private clearHoldTimer(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  /** A trailed batch was refused (its first refused event's error, or the whole write's): the run stops on it. */
  private stopOn(refusal: unknown): void {
    if (refusal instanceof RunHistoryLimitError) this.capReached();
    else this.writeFailed(refusal);
  }

  private sent(events: number, bytes: number): void {
    this.sending -= 1;
    this.backlog.events -= events;
    this.backlog.bytes -= bytes;
  }

  private get stopped(): boolean {
    return this.limitReached || this.writeFailure !== undefined;
  }

  private writeFailed(error: unknown): void {
    this.writeFailure ??= error instanceof Error ? error : new Error(String(error));
    this.stopRun();
  }

  private capReached(): ToolCallError {
    this.limitReached = true;
    this.stopRun();
    return new ToolCallError(RUN_HISTORY_LIMIT_MESSAGE);
  }
}
