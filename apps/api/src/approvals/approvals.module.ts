import { Global, Module } from '@nestjs/common';
import { ApprovalHold } from './approval-hold';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';

/** Global: the exec and wait replies ask ApprovalHold whether a run waits for an approval. */
@Global()
@Module({
  controllers: [ApprovalsController],
  providers: [ApprovalsService, ApprovalHold],
  exports: [ApprovalHold],
})
export class ApprovalsModule {}
