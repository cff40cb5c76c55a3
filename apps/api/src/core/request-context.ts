import type { IncomingMessage } from 'node:http';

/** What the raw-body middleware made of the request body. */
export type ParsedBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'empty' }
  | { kind: 'too_large' }
  | { kind: 'invalid_json' };

/** The request as our middleware and guard leave it. */
export interface ApiRequest extends IncomingMessage {
  parsedBody?: ParsedBody;
  tenant?: string;
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  route?: { path?: string };
  originalUrl?: string;
}

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
export const BODY_TOO_LARGE_ERROR = 'request body exceeds 16 MiB.';
export const BODY_NOT_JSON_ERROR = 'request body must be a JSON object.';
