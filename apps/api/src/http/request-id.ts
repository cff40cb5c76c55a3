import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { withLogContext } from '@codemode/telemetry';
import type { ApiRequest } from './request-context';

/** SPEC §19: a caller's `X-Request-Id` is kept only when it matches this. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

/** The caller's id when it is one SPEC §19 accepts (one header, matching the pattern), else a new one. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
}

/**
 * First middleware: gives the request its id and echoes it in the answer's header, so every
 * answer, a 401 or 413 from a later middleware included, carries it.
 */
export function assignRequestId() {
  return (req: ApiRequest, res: ServerResponse, next: () => void): void => {
    req.requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    res.setHeader(REQUEST_ID_HEADER, req.requestId);
    next();
  };
}

/**
 * Last middleware: the request's handler runs in its log context, so its log lines and the run it
 * records carry the id. Not set earlier: the body middleware calls on from the socket's events,
 * which do not keep a context set before them.
 */
export function enterRequestLogContext() {
  return (req: ApiRequest, _res: ServerResponse, next: () => void): void => {
    if (req.requestId === undefined) next();
    else withLogContext({ requestId: req.requestId }, next);
  };
}
