import { Injectable, OnModuleInit } from '@nestjs/common';
import { WorkerReports } from '@codemode/fleet';
import { ApiMetrics } from '@codemode/telemetry';

/**
 * `codemode_workers_live` (SPEC §19), read from the worker registry on each scrape like the queue
 * gauges: every API replica reports the same fleet, and an idle replica reads nothing between scrapes.
 */
@Injectable()
export class WorkersLiveGauge implements OnModuleInit {
  constructor(
    private readonly metrics: ApiMetrics,
    private readonly reports: WorkerReports,
  ) {}

  onModuleInit(): void {
    this.metrics.addCollector(async () => this.metrics.workersLive.set(await this.reports.liveCount()));
  }
}
