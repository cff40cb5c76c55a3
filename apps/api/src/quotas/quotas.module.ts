import { Global, Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { StoredBytesInterceptor } from './stored-bytes.interceptor';
import { TenantLimits } from './tenant-limits.service';

/** Per-tenant quotas of the API (SPEC §10). */
@Global()
@Module({
  imports: [MetricsModule],
  providers: [TenantLimits, StoredBytesInterceptor],
  exports: [TenantLimits, StoredBytesInterceptor],
})
export class QuotasModule {}
