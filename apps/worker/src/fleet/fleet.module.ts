import { Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { WorkerReports } from '@codemode/fleet';
import { REDIS } from '../core/tokens';
import { WorkerReporter } from './worker-report.service';

/** The worker's part of the operator console's fleet view. */
@Module({
  providers: [
    { provide: WorkerReports, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new WorkerReports(r, k) },
    WorkerReporter,
  ],
})
export class FleetModule {}
