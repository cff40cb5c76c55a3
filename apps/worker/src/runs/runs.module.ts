import { Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { RunLedger, RunOwnership, WorkerPresence } from '@codemode/events';
import { SandboxPool } from '@codemode/sandbox';
import { APP_CONFIG } from '../core/tokens';
import { ToolsModule } from '../tools/tools.module';
import { CellRunner } from './cell-runner.service';
import { HeldRunJobs } from './held-run-jobs.service';
import { ParkedImages } from './parked-images.service';
import { ParkedRuns } from './parked-runs.service';
import { RunOutcomes } from './run-outcomes.service';

@Module({
  imports: [ToolsModule],
  providers: [
    {
      provide: RunOwnership,
      inject: [RunLedger, WorkerPresence, SandboxPool, APP_CONFIG],
      // A run this worker owns is alive while its VM is in this worker's pool, whatever the lease says.
      useFactory: (r: RunLedger, p: WorkerPresence, pool: SandboxPool, c: AppConfig) =>
        new RunOwnership(r, p, { workerId: c.workerId, holds: (runId) => pool.holds(runId) }),
    },
    ParkedRuns,
    ParkedImages,
    RunOutcomes,
    CellRunner,
    HeldRunJobs,
  ],
  exports: [RunOwnership, ParkedRuns, ParkedImages, RunOutcomes, CellRunner, HeldRunJobs],
})
export class RunsModule {}
