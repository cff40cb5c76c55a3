import { HttpException, HttpStatus } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { ApiErrorBody } from '@codemode/contracts';
import { bodyTooLargeError } from './request-context';
import { STORE_FULL_ERROR } from '../runs/host-results';

/** HTTP 400 naming the field that is wrong. */
export class InvalidInputException extends HttpException {
  constructor(error: string, details?: unknown) {
    const body: ApiErrorBody = { error, code: 'invalid_input', ...(details === undefined ? {} : { details }) };
    super(body, HttpStatus.BAD_REQUEST);
  }
}

export class NotFoundApiException extends HttpException {
  constructor(error: string) {
    super({ error, code: 'not_found' } satisfies ApiErrorBody, HttpStatus.NOT_FOUND);
  }
}

export class ConflictApiException extends HttpException {
  constructor(error: string, details?: unknown) {
    super({ error, code: 'conflict', ...(details === undefined ? {} : { details }) } satisfies ApiErrorBody, HttpStatus.CONFLICT);
  }
}

export class UnauthorizedApiException extends HttpException {
  constructor() {
    super(
      { error: 'missing or unknown API key; send Authorization: Bearer <key>.', code: 'unauthorized' } satisfies ApiErrorBody,
      HttpStatus.UNAUTHORIZED,
    );
  }
}

/** HTTP 403: the key's role may not do this (SPEC §11: agent keys change no policy and decide no approval). */
export class ForbiddenApiException extends HttpException {
  constructor(error: string) {
    super({ error, code: 'forbidden' } satisfies ApiErrorBody, HttpStatus.FORBIDDEN);
  }
}

/** HTTP 403: the session's tool policy does not let this key's call through (SPEC §11: agent keys on the REST shell routes). */
export class PolicyDeniedApiException extends HttpException {
  constructor(error: string) {
    super({ error, code: 'policy_denied' } satisfies ApiErrorBody, HttpStatus.FORBIDDEN);
  }
}

/** HTTP 413: a body over its route's cap (SPEC §10 "API"), refused without being read whole. */
export class PayloadTooLargeApiException extends HttpException {
  constructor(limitBytes: number) {
    super({ error: bodyTooLargeError(limitBytes), code: 'invalid_input' } satisfies ApiErrorBody, HttpStatus.PAYLOAD_TOO_LARGE);
  }
}

/**
 * Answers `exception` the way the exception filter would, for middleware that refuses a request
 * before Nest routes it. `close` ends the connection after the answer instead of reading on.
 */
export function sendApiError(res: ServerResponse, exception: HttpException, opts: { close: boolean }): void {
  res.statusCode = exception.getStatus();
  res.setHeader('content-type', 'application/json; charset=utf-8');
  if (opts.close) res.setHeader('connection', 'close');
  res.end(JSON.stringify(exception.getResponse()));
}

/** Redis is unreachable, or refused the write for memory (`full`): the client should retry. */
export class StoreUnavailableException extends HttpException {
  constructor(full = false) {
    super(
      {
        error: full ? STORE_FULL_ERROR : 'the session store is unavailable; retry in a few seconds.',
        code: 'runtime_unavailable',
      } satisfies ApiErrorBody,
      HttpStatus.SERVICE_UNAVAILABLE,
    );
  }
}
