import { Controller, Get, Header } from '@nestjs/common';
import { ApiMetrics, PROMETHEUS_CONTENT_TYPE } from '@codemode/telemetry';

/** Prometheus scrape endpoint at the root, outside `/v1` and its auth (single mode; see PublicMetricsModule). */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: ApiMetrics) {}

  @Get()
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return this.metrics.scrape();
  }
}
