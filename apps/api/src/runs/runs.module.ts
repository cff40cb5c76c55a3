import { Module } from '@nestjs/common';
import { RunLedger, RunOwnership, WorkerPresence } from '@codemode/events';
import { AbortService } from './abort.service';
import { ExecService } from './exec.service';
import { ToolResultsService } from './tool-results.service';
import { RunsController } from './runs.controller';
import { WaitService } from './wait.service';

@Module({
  controllers: [RunsController],
  providers: [
    ExecService,
    WaitService,
    AbortService,
    ToolResultsService,
    // The API judges every owner by its lease: it holds no run itself.
    { provide: RunOwnership, inject: [RunLedger, WorkerPresence], useFactory: (r: RunLedger, p: WorkerPresence) => new RunOwnership(r, p) },
  ],
})
export class RunsModule {}
