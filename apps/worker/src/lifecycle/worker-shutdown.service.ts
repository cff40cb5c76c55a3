import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { CellsProcessor } from '../cells/cells.processor';
import { ResumesProcessor } from '../resumes/resumes.processor';
import { RunOutcomes } from '../runs/run-outcomes.service';
import { ShellProcessor } from '../shell/shell.processor';

export const SHUTDOWN_LOST_REASON = 'the worker holding the parked cell shut down';

/**
 * SIGTERM, in order: take no new cells or resumes and let running ones finish within their
 * budget; then hand the replay-safe runs still parked here over (the next wait replays them on
 * another worker) and end the others as `run.lost` (their VMs die with this process).
 * Shell process groups, Redis and the sandbox pool close afterwards (onApplicationShutdown).
 */
@Injectable()
export class WorkerShutdown implements BeforeApplicationShutdown {
  constructor(
    private readonly cells: CellsProcessor,
    private readonly resumes: ResumesProcessor,
    private readonly outcomes: RunOutcomes,
    private readonly shell: ShellProcessor,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.cells.close(), this.resumes.close(), this.shell.close()]);
    await this.outcomes.giveUpAllParked(SHUTDOWN_LOST_REASON);
  }
}
