import { Global, Module } from '@nestjs/common';
import { WorkerTenantLimits } from './worker-tenant-limits.service';

/** Per-tenant quotas the worker enforces (SPEC §10): shell sessions and parked runs. */
@Global()
@Module({
  providers: [WorkerTenantLimits],
  exports: [WorkerTenantLimits],
})
export class QuotasModule {}
