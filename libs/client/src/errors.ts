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
