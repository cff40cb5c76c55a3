import { Controller, Get, Header } from '@nestjs/common';
import { PROMETHEUS_CONTENT_TYPE, WorkerMetrics } from '@codemode/telemetry';

/** Prometheus scrape endpoint on WORKER_METRICS_PORT, beside the health routes. */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: WorkerMetrics) {}

  @Get()
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return this.metrics.scrape();
  }
}
