import { HttpException, HttpStatus } from '@nestjs/common';
import type { ApiErrorBody } from '@codemode/contracts';

/** What `details.limit` names (SPEC §10). */
export type ApiTenantLimit = 'inflight' | 'streams' | 'rate' | 'stored_bytes';

/** HTTP 429 `{error, code:"tenant_limit", details:{limit}}`; the caller sets `Retry-After` from `retryAfterSeconds`. */
export class TenantLimitException extends HttpException {
  constructor(
    readonly limit: ApiTenantLimit,
    error: string,
    readonly retryAfterSeconds: number,
  ) {
    super({ error, code: 'tenant_limit', details: { limit } } satisfies ApiErrorBody, HttpStatus.TOO_MANY_REQUESTS);
  }
}
