import { Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { WorkerReports } from '@codemode/fleet';
import { REDIS } from '../core/tokens';
import { SessionsModule } from '../sessions/sessions.module';
import { ConsoleController } from './console.controller';
import { FleetController } from './fleet.controller';
import { FleetService } from './fleet.service';

/** The operator console: its page at `/console` and the fleet view it reads. */
@Module({
  imports: [SessionsModule],
  controllers: [ConsoleController, FleetController],
  providers: [
    FleetService,
    { provide: WorkerReports, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new WorkerReports(r, k) },
  ],
})
export class ConsoleModule {}
