import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { DEFAULT_TENANT, type AppConfig } from '@codemode/config';
import { UnauthorizedApiException } from './api-errors';
import type { ApiRequest } from './request-context';
import { APP_CONFIG } from './tokens';

const V1_PATH = /^\/v1(\/|\?|$)/i;

/**
 * Resolves the tenant of every `/v1` request from its bearer key. Operational routes at the root
 * stay open. With no keys configured there is one tenant, `default`.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<ApiRequest>();
    // Express matches routes case-insensitively, so `/V1/...` reaches the same handlers.
    if (!V1_PATH.test(req.url ?? '')) return true;
    if (this.config.apiKeys === null) {
      req.tenant = DEFAULT_TENANT;
      return true;
    }
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const tenant = match ? this.config.apiKeys.get(match[1]) : undefined;
    if (tenant === undefined) throw new UnauthorizedApiException();
    req.tenant = tenant;
    return true;
  }
}
