import { Global, Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { ApprovalLedger, KeySpace } from '@codemode/events';
import { REDIS } from '../core/tokens';
import { ApprovalHold } from './approval-hold';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';

/** Global: the exec and wait replies ask ApprovalHold whether a run waits for an approval. */
@Global()
@Module({
  controllers: [ApprovalsController],
  providers: [
    { provide: ApprovalLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new ApprovalLedger(r, k) },
    ApprovalsService,
    ApprovalHold,
  ],
  exports: [ApprovalLedger, ApprovalHold],
})
export class ApprovalsModule {}
