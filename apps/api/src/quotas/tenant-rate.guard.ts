import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { ApiRequest } from '../core/request-context';
import { TenantLimitException } from './tenant-limit.exception';
import { TenantLimits } from './tenant-limits.service';

/**
 * SPEC §10 request rate: every `/v1` (and `/mcp`) request of a tenant takes a token from its bucket. Runs after
 * the AuthGuard (registered after it), so only authenticated requests count, each against its
 * own tenant; operational routes carry no tenant and are not limited.
 */
@Injectable()
export class TenantRateGuard implements CanActivate {
  constructor(private readonly limits: TenantLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ApiRequest>();
    if (req.tenant === undefined) return true;
    try {
      await this.limits.request(req.tenant);
    } catch (error) {
      if (error instanceof TenantLimitException) retryAfter(context.switchToHttp().getResponse<ServerResponse>(), error);
      throw error;
    }
    return true;
  }
}

/** Sets `Retry-After` on the answer to a quota refusal. */
export function retryAfter(res: ServerResponse, error: TenantLimitException): void {
  if (!res.headersSent) res.setHeader('retry-after', String(error.retryAfterSeconds));
}
