import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { SESSION_ID_PATTERN } from '@codemode/contracts';
import type { ServerResponse } from 'node:http';
import { from, type Observable } from 'rxjs';
import { finalize, switchMap } from 'rxjs/operators';
import type { ApiRequest } from '../http/request-context';
import { TenantLimitException } from './tenant-limit.exception';
import { TenantLimits } from './tenant-limits.service';
import { retryAfter } from './tenant-rate.guard';

/**
 * SPEC §10 "Redis storage" on a route that writes to a session (other than `exec`/`wait`, which
 * answer a result instead): past the tenant's stored bytes, 429 (`details.limit: "stored_bytes"`,
 * `Retry-After`) before the handler writes anything; after the handler, the session is measured
 * for the tenant's total.
 */
@Injectable()
export class StoredBytesInterceptor implements NestInterceptor {
  constructor(private readonly limits: TenantLimits) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<ApiRequest>();
    const tenant = req.tenant;
    if (tenant === undefined) return next.handle();
    const sessionId = req.params?.sid ?? '';
    const room = this.limits.requireStorage(tenant).catch((error: unknown) => {
      if (error instanceof TenantLimitException) retryAfter(context.switchToHttp().getResponse<ServerResponse>(), error);
      throw error;
    });
    return from(room).pipe(
      switchMap(() =>
        next.handle().pipe(
          finalize(() => {
            if (SESSION_ID_PATTERN.test(sessionId)) this.limits.storageWritten({ tenant, sessionId });
          }),
        ),
      ),
    );
  }
}
