import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { WorkerReports } from '@codemode/fleet';
import { DEFAULT_MAX_PARKED, SandboxPool } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/**
 * Tells the operator console's fleet view what this worker is doing: when it started, its
 * sandbox threads and how many are busy, its parked runs, and its configured slots. Written every quarter lease and
 * expiring with the lease, so a dead worker's report goes with it.
 */
@Injectable()
export class WorkerReporter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly startedAt = new Date().toISOString();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly reports: WorkerReports,
    private readonly pool: SandboxPool,
  ) {}

  onApplicationBootstrap(): void {
    const report = (): void => {
      this.report().catch((error: unknown) => this.logger.debug({ err: error }, 'could not write the worker report'));
    };
    report();
    this.timer = setInterval(report, Math.max(250, Math.floor(this.config.presenceTtlMs / 4)));
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async report(): Promise<void> {
    const stats = this.pool.stats();
    await this.reports.publish(
      this.config.workerId,
      {
        startedAt: this.startedAt,
        threads: stats.threads,
        busyThreads: stats.busy,
        parkedRuns: stats.parked,
        cellSlots: this.config.cellConcurrency,
        // The pool is started without `maxParked`, so its cap is the default.
        parkedSlots: DEFAULT_MAX_PARKED,
      },
      this.config.presenceTtlMs,
    );
  }
}
