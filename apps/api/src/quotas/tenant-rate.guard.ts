import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { routePath, type ApiRequest } from '../http/request-context';
import { TenantLimitException } from './tenant-limit.exception';
import { TenantLimits } from './tenant-limits.service';

/**
 * SPEC §10 request rate: every `/v1` (and `/mcp`) request of a tenant takes a token from its bucket,
 * and an MCP POST one per JSON-RPC message (SPEC §14: a batch counts each of its messages, so a
 * batch of 100 costs what 100 requests do). Runs after the AuthGuard (registered after it) and
 * after the body was read, so only authenticated requests count, each against its own tenant;
 * operational routes carry no tenant and are not limited. REST `exec` and `wait` never reach it
 * (`codeModeRoute` serves them): they take their token in `CodeModeCalls`' admission, in the
 * script that takes their in-flight slot, one round trip where there were two.
 */
@Injectable()
export class TenantRateGuard implements CanActivate {
  constructor(private readonly limits: TenantLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ApiRequest>();
    if (req.tenant === undefined) return true;
    try {
      await this.limits.request(req.tenant, requestsIn(req));
    } catch (error) {
      if (error instanceof TenantLimitException) retryAfter(context.switchToHttp().getResponse<ServerResponse>(), error);
      throw error;
    }
    return true;
  }
}

const MCP_ROUTE = /^\/mcp\/?$/i;

/** How many requests `req` counts as: the messages of an MCP POST's JSON-RPC batch, else one. */
export function requestsIn(req: ApiRequest): number {
  const body = req.parsedBody;
  if (req.method !== 'POST' || body?.kind !== 'json' || !Array.isArray(body.value)) return 1;
  return MCP_ROUTE.test(routePath(req.originalUrl ?? req.url ?? '') ?? '') ? Math.max(1, body.value.length) : 1;
}

/** Sets `Retry-After` on the answer to a quota refusal. */
export function retryAfter(res: ServerResponse, error: TenantLimitException): void {
  if (!res.headersSent) res.setHeader('retry-after', String(error.retryAfterSeconds));
}
