import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { apiTenancy, type AppConfig } from '@codemode/config';
import { TENANCY_RECORD_TTL_SECONDS, TenancyRecord } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from './tokens';

/** Until the first write lands (Redis still connecting), it is tried again this often. */
const FIRST_RETRY_MS = 250;

/**
 * Records this deployment's tenancy mode in Redis for the workers (SPEC §10 "Mode"): at start,
 * again every FIRST_RETRY_MS until that lands, then several times per record lifetime so a Redis
 * that lost it gets it back. The API is not ready until its mode is recorded, so no worker
 * started behind a ready API acts in the wrong mode.
 */
@Injectable()
export class TenancyAnnouncement implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private landed = false;
  private readonly mode: 'multi' | 'single';

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly record: TenancyRecord,
  ) {
    this.mode = apiTenancy(config);
  }

  /** Whether the mode has been recorded at least once. */
  get recorded(): boolean {
    return this.landed;
  }

  onApplicationBootstrap(): void {
    // At debug: the start's one info line (main.ts) names the mode.
    this.logger.debug({ tenancy: this.mode }, `tenancy mode ${this.mode}`);
    void this.announce();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  private async announce(): Promise<void> {
    try {
      await this.record.write(this.mode);
      this.landed = true;
    } catch (error) {
      if (this.landed) this.logger.warn({ err: error, tenancy: this.mode }, 'could not record the tenancy mode; retrying');
    }
    const next = this.landed ? (TENANCY_RECORD_TTL_SECONDS * 1000) / 10 : FIRST_RETRY_MS;
    this.timer = setTimeout(() => void this.announce(), next);
    this.timer.unref();
  }
}
