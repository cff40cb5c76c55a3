import { Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { LiveRunIndex, ParkedImageStore, ParkedRunHoldings, RunEnds, RunLedger, RunOwnership } from '@codemode/events';
import { TenantQuotaLedger, WorkerPresence } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { SandboxPool } from '@codemode/sandbox';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ToolsModule } from '../tools/tools.module';
import { CellRunner } from './cell-runner.service';
import { HeldRunJobs } from './held-run-jobs.service';
import { LegRunner } from './leg-runner.service';
import { ParkedImages } from './parked-images.service';
import { ResidentRuns } from './resident-runs.service';
import { RunOutcomes } from './run-outcomes.service';
import { RunningLegs } from './running-legs.service';

@Module({
  imports: [ToolsModule],
  providers: [
    {
      provide: RunOwnership,
      inject: [WorkerPresence, SandboxPool, APP_CONFIG],
      // A run this worker owns is alive while its VM is in this worker's pool, whatever the lease says.
      useFactory: (p: WorkerPresence, pool: SandboxPool, c: AppConfig) =>
        new RunOwnership(p, { workerId: c.workerId, holds: (runId) => pool.holds(runId) }),
    },
    {
      provide: RunEnds,
      inject: [RunLedger, LiveRunIndex, TenantQuotaLedger, ParkedImageStore, LOGGER],
      // A run this worker kept parked holds a quota place and an image, given back when it ends.
      useFactory: (r: RunLedger, live: LiveRunIndex, quotas: TenantQuotaLedger, images: ParkedImageStore, logger: Logger) =>
        new RunEnds(r, live, new ParkedRunHoldings(quotas, images, (fields, message) => logger.warn(fields, message))),
    },
    ResidentRuns,
    ParkedImages,
    RunOutcomes,
    RunningLegs,
    LegRunner,
    CellRunner,
    HeldRunJobs,
  ],
  exports: [RunOwnership, RunEnds, ResidentRuns, ParkedImages, RunningLegs, LegRunner, CellRunner, HeldRunJobs],
})
export class RunsModule {}
