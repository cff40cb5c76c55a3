import { Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { onStoreFailure } from '@codemode/events';
import { ApiMetrics, createApiMetrics } from '@codemode/telemetry';
import { APP_CONFIG } from '../core/tokens';
import { MetricsPort } from './metrics-port.service';
import { QueueGauges } from './queue-gauges.service';
import { WorkersLiveGauge } from './workers-live-gauge.service';

/** The API's Prometheus registry, the queue and live-worker gauges, and the metrics port of multi-tenant mode. */
@Module({
  providers: [
    {
      provide: ApiMetrics,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => {
        const metrics = createApiMetrics(c.version, { tenantLabel: c.tenancySettings.metricsTenantLabel });
        onStoreFailure((reason) => metrics.storeFailed(reason));
        return metrics;
      },
    },
    QueueGauges,
    WorkersLiveGauge,
    MetricsPort,
  ],
  exports: [ApiMetrics],
})
export class MetricsModule {}
