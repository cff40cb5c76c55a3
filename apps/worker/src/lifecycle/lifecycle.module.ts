import { Module } from '@nestjs/common';
import { CellsModule } from '../cells/cells.module';
import { RecoveryModule } from '../recovery/recovery.module';
import { OwnQueueModule } from '../own-queue/own-queue.module';
import { RunsModule } from '../runs/runs.module';
import { ShellModule } from '../shell/shell.module';
import { LapsedOwnerRebuilds } from './lapsed-owner-rebuilds.service';
import { LiveRunSweeper } from './live-run-sweeper.service';
import { ParkedRunSweeper } from './parked-run-sweeper.service';
import { PresenceHeartbeat } from './presence-heartbeat.service';
import { WorkerQueueJanitor } from './worker-queue-janitor.service';
import { WorkerShutdown } from './worker-shutdown.service';
import { WorkspaceCleanup } from './workspace-cleanup.service';

@Module({
  imports: [CellsModule, RecoveryModule, OwnQueueModule, RunsModule, ShellModule],
  providers: [
    WorkerShutdown,
    PresenceHeartbeat,
    ParkedRunSweeper,
    LiveRunSweeper,
    LapsedOwnerRebuilds,
    WorkerQueueJanitor,
    WorkspaceCleanup,
  ],
  exports: [PresenceHeartbeat],
})
export class LifecycleModule {}
