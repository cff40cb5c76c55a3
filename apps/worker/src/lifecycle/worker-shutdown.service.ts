import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@codemode/telemetry';
import { LOGGER } from '../core/tokens';
import { CellStreamReaders } from '../cells/cell-stream-readers';
import { CellsProcessor } from '../cells/cells.processor';
import { OwnQueueProcessor } from '../own-queue/own-queue.processor';
import { ResidentRuns } from '../runs/resident-runs.service';
import { ShellCalls } from '../shell/shell-calls.service';
import { ShellProcessor } from '../shell/shell.processor';
import { PresenceHeartbeat } from './presence-heartbeat.service';
import { WorkerQueueJanitor } from './worker-queue-janitor.service';

export const SHUTDOWN_LOST_REASON = 'the worker holding the parked cell shut down';

/**
 * SIGTERM, in order: take no new cells or resumes and let running ones (and shell calls) finish
 * within their budget; then hand the runs still parked here over (SPEC §12: their images are in Redis, and
 * the next wait restores them, or replays a replay-safe one, on another worker; a run whose VM
 * could not be captured ends `run.lost`, its VM dying with this process); then give
 * the lease up (nothing is routed here any more) and remove this worker's own queue (SPEC §10).
 * Shell process groups, Redis and the sandbox pool close afterwards (onApplicationShutdown).
 */
@Injectable()
export class WorkerShutdown implements BeforeApplicationShutdown {
  constructor(
    private readonly cells: CellsProcessor,
    private readonly streamCells: CellStreamReaders,
    private readonly resumes: OwnQueueProcessor,
    private readonly residentRuns: ResidentRuns,
    private readonly shell: ShellProcessor,
    private readonly shellCalls: ShellCalls,
    private readonly heartbeat: PresenceHeartbeat,
    private readonly janitor: WorkerQueueJanitor,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.cells.close(), this.streamCells.close(), this.resumes.close(), this.shell.close()]);
    // Shell calls run detached from the consumers: the ones they started answer before anything closes.
    await this.shellCalls.drain();
    await this.residentRuns.giveUpAll(SHUTDOWN_LOST_REASON);
    await this.heartbeat.stop();
    // Jobs routed here since the consumers closed go with it; their callers' deadlines answer them.
    // If this fails, the other workers remove the queue after the grace.
    await this.janitor
      .removeOwnQueue()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not remove this worker’s queue; another worker will'));
  }
}
