import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { ApiRequest } from './request-context';

/**
 * When a request's connection goes, watched from the request's first byte (the first middleware
 * sets `req.connectionClosed`), so a handler that awaits before it starts to stream (a quota slot, a pairing)
 * still learns of a client that closed meanwhile: a listener added only after those awaits never
 * hears a close that came first, and the slot, the node's hold and the stream leaked for good.
 * The signal aborts when the response closes: the client went, or the answer was sent.
 */
export function watchConnectionClose() {
  return (req: ApiRequest, res: ServerResponse, next: () => void): void => {
    req.connectionClosed = responseClosed(res);
    next();
  };
}

/**
 * The reason every close signal aborts with: one object made once. `abort()` without a reason
 * builds a DOMException, stack trace and all, and every response closes (~30 µs per request in
 * the API's profile); nothing reads the reason.
 */
const CONNECTION_CLOSED = new Error('the connection closed');

/** Aborts once `res` closes (at once if it has). */
export function responseClosed(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.closed || res.destroyed || res.socket?.destroyed === true) controller.abort(CONNECTION_CLOSED);
  else res.once('close', () => controller.abort(CONNECTION_CLOSED));
  return controller.signal;
}

/** The request's close signal for a handler that holds its connection open (a stream). */
export const ConnectionClosed = createParamDecorator((_: unknown, ctx: ExecutionContext): AbortSignal => {
  const http = ctx.switchToHttp();
  return closeSignalOf(http.getRequest<ApiRequest>(), http.getResponse<ServerResponse>());
});

/** `req.connectionClosed`, or (a request the middleware did not see) one watched from now, checked for a close already past. */
export function closeSignalOf(req: ApiRequest, res: ServerResponse): AbortSignal {
  return req.connectionClosed ?? responseClosed(res);
}

/** Resolves once `signal` aborts: at once when it has already. */
export function untilClosed(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
