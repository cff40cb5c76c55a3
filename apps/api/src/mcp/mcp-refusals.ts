import { HttpException } from '@nestjs/common';
import { JsonRpcRefusal, type ApiErrorBody } from '@codemode/contracts';
import { TenantLimitException } from '../quotas/tenant-limit.exception';

/** An HTTP refusal (JsonRpcRefusal.ofHttp) of the call. */
export async function refusedAsMcpError<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw asMcpError(error);
  }
}

/** What REST would have answered with an HTTP error, as the JSON-RPC error MCP answers; anything else as it is. */
export function asMcpError(error: unknown): unknown {
  if (!(error instanceof HttpException)) return error;
  const retry = error instanceof TenantLimitException ? { retryAfterSeconds: error.retryAfterSeconds } : {};
  return JsonRpcRefusal.ofHttp(error.getStatus(), error.getResponse() as ApiErrorBody, retry);
}
