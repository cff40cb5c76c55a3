import { INVALID_SESSION_ID_MESSAGE } from '@codemode/contracts';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { ApiErrorBody, ApiErrorCode } from '@codemode/contracts';
import { EventsError, isStoreFull, isStoreUnavailable } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { emptyTelemetry, failedInputResult } from '@codemode/cells';
import { InvalidInputException, StoreUnavailableException } from './api-errors';
import { isCodeModeCall } from './raw-body.middleware';
import type { ApiRequest } from './request-context';
import { LOGGER } from '../core/tokens';

const CODE_BY_STATUS: Record<number, ApiErrorCode> = {
  400: 'invalid_input',
  401: 'unauthorized',
  404: 'not_found',
  409: 'conflict',
  503: 'runtime_unavailable',
};

/** Every error leaves as `{error, code, details?}`; nothing a client sends becomes a 500. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    answerError(exception, http.getRequest<ApiRequest>(), http.getResponse<ServerResponse>(), this.logger);
  }
}

/**
 * The one answer to an error of any route, Nest's or the Code Mode route's (`codeModeRoute`):
 * `{error, code, details?}` with its status, a Code Mode result for exec and wait, `Retry-After`
 * on a 503; anything not an HttpException is logged and answered as a 500.
 */
export function answerError(exception: unknown, req: ApiRequest, res: ServerResponse, logger: Logger): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const http = isStoreUnavailable(exception)
    ? new StoreUnavailableException(isStoreFull(exception))
    : exception instanceof EventsError && exception.code === 'invalid_input'
      ? new InvalidInputException(exception.message)
      : exception;
  let status = 500;
  let body: ApiErrorBody = { error: 'internal error; the failure was logged.', code: 'internal_error' };
  if (http instanceof HttpException) {
    status = http.getStatus();
    body = toBody(status, http.getResponse());
  } else {
    logger.error({ err: exception }, 'unhandled error in request');
  }
  if (status === 400 && isCodeModeCall(req)) {
    // The router refused the path (e.g. an undecodable session id) before exec/wait ran; the
    // model still reads a Code Mode result.
    sendJson(res, 200, failedInputResult(INVALID_SESSION_ID_MESSAGE, emptyTelemetry(), false));
    return;
  }
  if (status === 503) res.setHeader('retry-after', '2');
  sendJson(res, status, body);
}

function toBody(status: number, response: string | object): ApiErrorBody {
  const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'invalid_input');
  if (typeof response === 'string') return { error: response, code };
  const record = response as Record<string, unknown>;
  if (typeof record.error === 'string' && typeof record.code === 'string') return record as ApiErrorBody;
  const message = Array.isArray(record.message) ? record.message.join('; ') : record.message;
  return { error: typeof message === 'string' ? message : `HTTP ${status}`, code };
}

/** A JSON answer as every route of ours sends one. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
