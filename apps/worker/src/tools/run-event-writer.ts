import { RUN_HISTORY_LIMIT_MESSAGE, RunHistoryLimitError, SameTickAppends, type AppendInput, type EventLog } from '@codemode/events';
import { ToolCallError } from './tool-call-error';
import type { ToolRun } from './tool-run';

/**
 * Writes one run's events from its tool calls (`tool.called`, `tool.settled`, `tool.blocked`):
 * those asked for in the same tick go in one script call, and at the history cap (SPEC §6) the
 * run is stopped and the call rejects with the cap's message.
 *
 * Events recorded after their call answered (`trail`: a read made in this process) are written
 * while the guest goes on. The log keeps its order all the same: every later write of the run
 * waits until they landed, and if they could not be written, the run stops and that write rejects
 * (so no later call, and not the run's park or end, is recorded without them: `landed`).
 */
export class RunEventWriter {
  private readonly appends: SameTickAppends;
  private limitReached = false;
  /** The writes of trailed events not landed yet; settles (never rejects) once they did. */
  private trailing: Promise<void> | undefined;
  /** Why trailed events could not be written (not the history cap): the run stopped on it. */
  private trailFailure: Error | undefined;

  constructor(
    log: Pick<EventLog, 'append' | 'appendAll'>,
    run: Pick<ToolRun, 'ref'>,
    private readonly stopRun: () => void,
  ) {
    this.appends = new SameTickAppends(log, run.ref);
  }

  /** A write of this run was refused at the history cap: the run fails with it, whatever the cell did. */
  get historyFull(): boolean {
    return this.limitReached;
  }

  /** Why trailed events could not be written (a Redis failure, say), else undefined; the run was stopped on it. */
  get trailedFailure(): Error | undefined {
    return this.trailFailure;
  }

  /**
   * @throws ToolCallError with the cap's message when the run's history is full
   * @throws what kept trailed events from being written, the run stopped on it
   */
  async append(input: AppendInput): Promise<void> {
    await this.landed();
    this.refuseIfStopped();
    try {
      await this.appends.append(input);
    } catch (error) {
      if (!(error instanceof RunHistoryLimitError)) throw error;
      throw this.capReached();
    }
  }

  /**
   * Writes `inputs` (in one append when asked in one tick) without holding the caller: a call that
   * changes nothing has answered, and its guest goes on meanwhile. At the cap, or when they cannot
   * be written, the run stops.
   */
  trail(inputs: readonly AppendInput[]): void {
    const written = Promise.all([this.landed(), ...inputs.map((input) => this.appends.append(input))]).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof RunHistoryLimitError) this.capReached();
        else {
          this.trailFailure ??= error instanceof Error ? error : new Error(String(error));
          this.stopRun();
        }
      },
    );
    this.trailing = written;
  }

  /** Resolves once every trailed event landed or failed (then the run was stopped); never rejects. */
  landed(): Promise<void> {
    return this.trailing ?? Promise.resolve();
  }

  /**
   * @throws ToolCallError with the cap's message, or what kept trailed events from being written:
   * the run was stopped on it, and a call that would trail its events is not made.
   */
  refuseIfStopped(): void {
    if (this.limitReached) throw new ToolCallError(RUN_HISTORY_LIMIT_MESSAGE);
    if (this.trailFailure !== undefined) throw this.trailFailure;
  }

  private capReached(): ToolCallError {
    this.limitReached = true;
    this.stopRun();
    return new ToolCallError(RUN_HISTORY_LIMIT_MESSAGE);
  }
}
