import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { WorkerPresence } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/**
 * Keeps this worker marked alive (renewed from the main thread every TTL/4, never from a thread
 * running guest code), so work is routed to it only while it can take it.
 */
@Injectable()
export class PresenceHeartbeat implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly presence: WorkerPresence,
  ) {}

  onApplicationBootstrap(): void {
    const beat = (): void => {
      this.presence.beat(this.config.workerId, this.config.presenceTtlMs).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'could not renew worker presence');
      });
    };
    beat();
    this.timer = setInterval(beat, Math.max(250, Math.floor(this.config.presenceTtlMs / 4)));
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.presence.leave(this.config.workerId).catch(() => undefined);
  }
}
