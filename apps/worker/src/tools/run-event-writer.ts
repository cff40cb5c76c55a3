import { RUN_HISTORY_LIMIT_MESSAGE, RunHistoryLimitError, SameTickAppends, type AppendInput, type EventLog } from '@codemode/events';
import { ToolCallError } from './tool-call-error';
import type { ToolRun } from './tool-run';

/**
 * Writes one run's events from its tool calls (`tool.called`, `tool.settled`, `tool.blocked`):
 * those asked for in the same tick go in one script call, and at the history cap (SPEC §6) the
 * run is stopped and the call rejects with the cap's message.
 */
export class RunEventWriter {
  private readonly appends: SameTickAppends;
  private limitReached = false;

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

  /** @throws ToolCallError with the cap's message when the run's history is full */
  async append(input: AppendInput): Promise<void> {
    try {
      await this.appends.append(input);
    } catch (error) {
      if (!(error instanceof RunHistoryLimitError)) throw error;
      this.limitReached = true;
      this.stopRun();
      throw new ToolCallError(RUN_HISTORY_LIMIT_MESSAGE);
    }
  }
}
