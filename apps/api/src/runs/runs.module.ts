import { Module } from '@nestjs/common';
import { LiveRunIndex, ParkedImageStore, ParkedRunExpiry, ParkedRunHoldings, RunEnds, RunLedger, RunOwnership } from '@codemode/events';
import { TenantQuotaLedger, WorkerPresence } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { LOGGER } from '../core/tokens';
import { MetricsModule } from '../metrics/metrics.module';
import { AbortService } from './abort.service';
import { CallAnswers } from './answers/call-answers';
import { IdleWaitAnswers } from './answers/idle-wait-answers';
import { CodeModeCalls } from './code-mode-calls';
import { ExecService } from './exec.service';
import { ToolResultsService } from './tool-results.service';
import { ResumeReservations } from './resume-reservations';
import { RunsController } from './runs.controller';
import { WaitService } from './wait.service';

@Module({
  imports: [MetricsModule],
  controllers: [RunsController],
  providers: [
    ExecService,
    WaitService,
    CallAnswers,
    IdleWaitAnswers,
    ResumeReservations,
    CodeModeCalls,
    AbortService,
    ToolResultsService,
    // The API judges every owner by its lease: it holds no run itself. A parked run with an image
    // in Redis is restored by any worker once its owner is gone (SPEC §12).
    {
      provide: RunOwnership,
      inject: [WorkerPresence, ParkedImageStore],
      useFactory: (p: WorkerPresence, images: ParkedImageStore) => new RunOwnership(p, undefined, images),
    },
    {
      provide: RunEnds,
      inject: [RunLedger, LiveRunIndex, TenantQuotaLedger, ParkedImageStore, LOGGER],
      // A parked run the API ends gives back its quota place and its image, as a worker's would.
      useFactory: (r: RunLedger, live: LiveRunIndex, quotas: TenantQuotaLedger, images: ParkedImageStore, logger: Logger) =>
        new RunEnds(r, live, new ParkedRunHoldings(quotas, images, (fields, message) => logger.warn(fields, message))),
    },
    // A wait that finds its run past its term asks the one expiry rule (it ends it, fenced by epoch).
    {
      provide: ParkedRunExpiry,
      inject: [RunEnds, RunOwnership],
      useFactory: (ends: RunEnds, o: RunOwnership) => new ParkedRunExpiry(ends, o),
    },
  ],
  exports: [AbortService, CodeModeCalls],
})
export class RunsModule {}
