import { Module } from '@nestjs/common';
import { KeySpace, ParkedImageStore, RunLedger, RunOwnership, WorkerPresence } from '@codemode/events';
import type { Redis } from 'ioredis';
import { REDIS } from '../core/tokens';
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
    // The API judges every owner by its lease: it holds no run itself. A parked run with an image
    // in Redis is restored by any worker once its owner is gone (SPEC §12).
    { provide: ParkedImageStore, inject: [REDIS, KeySpace], useFactory: (redis: Redis, k: KeySpace) => new ParkedImageStore(redis, k) },
    {
      provide: RunOwnership,
      inject: [RunLedger, WorkerPresence, ParkedImageStore],
      useFactory: (r: RunLedger, p: WorkerPresence, images: ParkedImageStore) => new RunOwnership(r, p, undefined, images),
    },
  ],
  exports: [AbortService],
})
export class RunsModule {}
