import { Global, Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { TenantQuotaLedger } from '@codemode/fleet';
import { REDIS } from '../core/tokens';
import { WorkerTenantLimits } from './worker-tenant-limits.service';

/** Per-tenant quotas the worker enforces (SPEC §10): shell sessions and parked runs. */
@Global()
@Module({
  providers: [
    { provide: TenantQuotaLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new TenantQuotaLedger(r, k) },
    WorkerTenantLimits,
  ],
  exports: [WorkerTenantLimits, TenantQuotaLedger],
})
export class QuotasModule {}
