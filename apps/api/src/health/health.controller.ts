import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import type { RedisClient } from '@codemode/events';
import { TenancyAnnouncement } from '../core/tenancy-announcement.service';
import { REDIS } from '../core/tokens';

/** Liveness says the process answers; readiness says it can do work (Redis answers, tenancy mode recorded). */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly tenancy: TenancyAnnouncement,
  ) {}

  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<{ status: 'ok'; redis: 'ok' }> {
    try {
      await this.redis.ping();
    } catch {
      throw new ServiceUnavailableException({ error: 'Redis does not answer; not ready.', code: 'runtime_unavailable' });
    }
    if (!this.tenancy.recorded) {
      throw new ServiceUnavailableException({ error: 'tenancy mode not recorded in Redis yet; not ready.', code: 'runtime_unavailable' });
    }
    return { status: 'ok', redis: 'ok' };
  }
}
