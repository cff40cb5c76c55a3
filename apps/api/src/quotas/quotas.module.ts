import { Global, Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace, TenantQuotaLedger } from '@codemode/events';
import { REDIS } from '../core/tokens';
import { MetricsModule } from '../metrics/metrics.module';
import { TenantLimits } from './tenant-limits.service';

/** Per-tenant quotas of the API (SPEC §10). */
@Global()
@Module({
  imports: [MetricsModule],
  providers: [
    { provide: TenantQuotaLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new TenantQuotaLedger(r, k) },
    TenantLimits,
  ],
  exports: [TenantLimits],
})
export class QuotasModule {}
