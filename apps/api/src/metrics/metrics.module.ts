import { Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { ApiMetrics, createApiMetrics } from '@codemode/telemetry';
import { APP_CONFIG } from '../core/tokens';
import { MetricsController } from './metrics.controller';
import { QueueGauges } from './queue-gauges.service';

/** The API's Prometheus registry, its scrape endpoint and the queue gauges. */
@Module({
  controllers: [MetricsController],
  providers: [
    {
      provide: ApiMetrics,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => createApiMetrics(c.version, { tenantLabel: c.tenancySettings.metricsTenantLabel }),
    },
    QueueGauges,
  ],
  exports: [ApiMetrics],
})
export class MetricsModule {}
