import { AsyncLocalStorage } from 'node:async_hooks';

/** Fields every log line written on behalf of one request (or of the run it asked for) carries. */
export interface LogContext {
  requestId: string;
}

const context = new AsyncLocalStorage<LogContext>();

/**
 * Runs `work` with `fields` added to every log line written within it (SPEC §19: the request id
 * in the API's lines of a request and in the worker's lines of the run it asked for), without
 * threading a logger through every call.
 */
export function withLogContext<T>(fields: LogContext, work: () => T): T {
  return context.run(fields, work);
}

/** The request id of the work in progress, if it has one. */
export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}

/** pino's `mixin`: the fields of the current log context, read at each line. */
export function logContextFields(): Partial<LogContext> {
  return context.getStore() ?? {};
}

/** `{ requestId }` of the work in progress, or `{}`: spread into what records a run (SPEC §19). */
export function requestIdField(): { requestId?: string } {
  const requestId = currentRequestId();
  return requestId === undefined ? {} : { requestId };
}
