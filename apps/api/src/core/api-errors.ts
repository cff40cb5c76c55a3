import { HttpException, HttpStatus } from '@nestjs/common';
import type { ApiErrorBody } from '@codemode/contracts';

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

/** Redis is unreachable: the client should retry; nothing was written. */
export class StoreUnavailableException extends HttpException {
  constructor() {
    super(
      { error: 'the session store is unavailable; retry in a few seconds.', code: 'runtime_unavailable' } satisfies ApiErrorBody,
      HttpStatus.SERVICE_UNAVAILABLE,
    );
  }
}
