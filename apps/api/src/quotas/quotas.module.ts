import { Global, Module } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { KeySpace, StoredBytesLedger } from '@codemode/events';
import { TenantQuotaLedger } from '@codemode/fleet';
import { REDIS } from '../core/tokens';
import { MetricsModule } from '../metrics/metrics.module';
import { StoredBytesInterceptor } from './stored-bytes.interceptor';
import { TenantLimits } from './tenant-limits.service';

/** Per-tenant quotas of the API (SPEC §10). */
@Global()
@Module({
  imports: [MetricsModule],
  providers: [
    { provide: TenantQuotaLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new TenantQuotaLedger(r, k) },
    { provide: StoredBytesLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new StoredBytesLedger(r, k) },
    TenantLimits,
    StoredBytesInterceptor,
  ],
  exports: [TenantLimits, TenantQuotaLedger, StoredBytesInterceptor],
})
export class QuotasModule {}
