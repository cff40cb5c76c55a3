import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { apiTenancy, type AppConfig } from '@codemode/config';
import { TENANCY_RECORD_TTL_SECONDS, TenancyRecord } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from './tokens';

/**
 * Records this deployment's tenancy mode in Redis for the workers (SPEC §10 "Mode"), at start
 * and then several times per record lifetime, so a Redis that lost it gets it back.
 */
@Injectable()
export class TenancyAnnouncement implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly record: TenancyRecord,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const mode = apiTenancy(this.config);
    const announce = () =>
      this.record.write(mode).catch((error: unknown) => this.logger.warn({ err: error, tenancy: mode }, 'could not record the tenancy mode; retrying'));
    await announce();
    this.logger.info({ tenancy: mode }, `tenancy mode ${mode}`);
    this.timer = setInterval(() => void announce(), (TENANCY_RECORD_TTL_SECONDS * 1000) / 10);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
