import { Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace, RunListing, SessionIndex } from '@codemode/events';
import { REDIS } from '../core/tokens';
import { RunListController, SessionListController } from './session-listing.controller';
import { SessionListing } from './session-listing.service';
import { SessionsController } from './sessions.controller';
import { StoreController } from './store.controller';
import { RunsModule } from '../runs/runs.module';
import { SessionDeletion } from './session-deletion.service';
import { SessionsService } from './sessions.service';

@Module({
  imports: [RunsModule],
  controllers: [SessionListController, SessionsController, RunListController, StoreController],
  providers: [
    SessionsService,
    SessionDeletion,
    SessionListing,
    { provide: SessionIndex, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new SessionIndex(r, k) },
    { provide: RunListing, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new RunListing(r, k) },
  ],
  exports: [SessionIndex, RunListing],
})
export class SessionsModule {}
