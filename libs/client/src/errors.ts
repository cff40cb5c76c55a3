import type { ApiErrorBody } from '@codemode/contracts';

/** Thrown when the service answers a non-2xx status; carries the parsed error body. */
export class CodeModeApiError extends Error {
  readonly code: string;
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | string,
  ) {
    super(typeof body === 'string' ? `HTTP ${status}: ${body}` : `HTTP ${status}: ${body.error}`);
    this.name = 'CodeModeApiError';
    this.code = typeof body === 'string' ? 'http_error' : body.code;
  }
}

/**
 * Thrown when no HTTP answer arrives at all (connection refused, DNS failure, reset). `reason` is
 * the socket-level cause (`connect ECONNREFUSED 127.0.0.1:3000`); for a wrapped error (fetch's
 * generic `fetch failed`), its cause.
 */
export class CodeModeConnectionError extends Error {
  readonly code = 'connection_failed';
  constructor(
    readonly baseUrl: string,
    readonly reason: string,
  ) {
    super(`cannot reach the Code Mode API at ${baseUrl}: ${reason}`);
    this.name = 'CodeModeConnectionError';
  }

  /** Wraps a transport rejection; an abort is passed through untouched so callers can tell it apart. */
  static from(baseUrl: string, error: unknown): unknown {
    if (isAbort(error)) return error;
    const cause = error instanceof Error ? (error.cause as { message?: unknown; code?: unknown } | undefined) : undefined;
    const causeMessage = cause && typeof cause.message === 'string' && cause.message !== '' ? cause.message : undefined;
    const causeCode = cause && typeof cause.code === 'string' ? cause.code : undefined;
    const reason = causeMessage ?? causeCode ?? (error instanceof Error ? error.message : String(error));
    return new CodeModeConnectionError(baseUrl, reason);
  }
}

/** Thrown when an event stream answers with something other than server-sent events. */
export class CodeModeStreamError extends Error {
  readonly code = 'stream_failed';
  constructor(message: string) {
    super(message);
    this.name = 'CodeModeStreamError';
  }
}

/** True for abort and timeout rejections (DOMExceptions, not always `instanceof Error` across realms). */
export function isAbort(error: unknown): boolean {
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
  return name === 'AbortError' || name === 'TimeoutError';
}
