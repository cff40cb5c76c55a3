import { Module } from '@nestjs/common';
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
  providers: [SessionsService, SessionDeletion, SessionListing],
})
export class SessionsModule {}
