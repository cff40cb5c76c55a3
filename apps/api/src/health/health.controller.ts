import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import type { RedisClient } from '@codemode/events';
import { WorkerReports } from '@codemode/fleet';
import { TenancyAnnouncement } from '../core/tenancy-announcement.service';
import { REDIS } from '../core/tokens';

/**
 * Liveness says the process answers; readiness says it can do work (Redis answers, tenancy mode
 * recorded). SPEC §19: the ready body says how many workers are live, but no worker does not make
 * the API unready (it can still take calls, which wait for a worker within their budget).
 */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly tenancy: TenancyAnnouncement,
    private readonly workers: WorkerReports,
  ) {}

  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<{ status: 'ok'; redis: 'ok'; workersLive: number | null }> {
    try {
      await this.redis.ping();
    } catch {
      throw new ServiceUnavailableException({ error: 'Redis does not answer; not ready.', code: 'runtime_unavailable' });
    }
    if (!this.tenancy.recorded) {
      throw new ServiceUnavailableException({ error: 'tenancy mode not recorded in Redis yet; not ready.', code: 'runtime_unavailable' });
    }
    // Null when the registry could not be read just after Redis answered the ping.
    const workersLive = await this.workers.liveCount().catch(() => null);
    return { status: 'ok', redis: 'ok', workersLive };
  }
}
