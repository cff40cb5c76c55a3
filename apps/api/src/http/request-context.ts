import type { IncomingMessage } from 'node:http';
import type { KeyRole } from '@codemode/config';
import { BODY_TOO_DEEP_ERROR } from '@codemode/contracts';

/** What the raw-body middleware made of the request body. */
export type ParsedBody =
  | {
      kind: 'json';
      value: unknown;
      /**
       * Parsed on a body thread (it was over `INLINE_BODY_BYTES`): a check whose cost grows with
       * what it holds (the code of an exec in an MCP message) runs on one too.
       */
      large?: true;
    }
  | { kind: 'empty' }
  /** Refused past `limitBytes` (declared or counted) without being buffered whole. */
  | { kind: 'too_large'; limitBytes: number }
  | { kind: 'invalid_json' }
  /** Nested deeper than SPEC §10 allows: refused before it was parsed. */
  | { kind: 'too_deep' }
  /**
   * A body of a large-body route too big to parse on the event loop: its route checks it on a body
   * thread (`BodyThreads`), parsing included.
   */
  | { kind: 'large'; bytes: Buffer };

/** The request as our middleware and guard leave it. */
export interface ApiRequest extends IncomingMessage {
  parsedBody?: ParsedBody;
  tenant?: string;
  /** What the key may do (SPEC §11); set with `tenant`. */
  role?: KeyRole;
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  route?: { path?: string };
  originalUrl?: string;
  /** SPEC §19: the caller's `X-Request-Id` or a new one (`assignRequestId`, the first middleware). */
  requestId?: string;
  /** Aborts when the connection goes (`watchConnectionClose`, the first middleware). */
  connectionClosed?: AbortSignal;
}

export const MIB = 1024 * 1024;
export const BODY_NOT_JSON_ERROR = 'request body must be a JSON object.';

/** What exec and wait answer (as `invalid_input`) for a body that is not a JSON value they can read. */
export function bodyRefusalError(body: Exclude<ParsedBody, { kind: 'json' } | { kind: 'large' }>): string {
  if (body.kind === 'too_large') return bodyTooLargeError(body.limitBytes);
  return body.kind === 'too_deep' ? BODY_TOO_DEEP_ERROR : BODY_NOT_JSON_ERROR;
}

/** SPEC §2 and §10 "API": `request body exceeds <N> MiB.` */
export function bodyTooLargeError(limitBytes: number): string {
  return `request body exceeds ${limitBytes / MIB} MiB.`;
}

/**
 * The paths Express's router would match for REST `exec` and `wait` (case-insensitive, a trailing
 * slash allowed): the raw session id segment, then the call.
 */
export const CODE_MODE_PATH = /^\/v1\/sessions\/([^/]+)\/(exec|wait)\/?$/i;

/** `http://host[:port]` (or https) with an authority that `url.parse` and we read the same way. */
const ABSOLUTE_FORM = /^https?:\/\/[A-Za-z0-9.:[\]-]*(?=[/?#]|$)/i;

/**
 * The path Express's router matches for a request target (origin-form or absolute-form), percent
 * escapes kept as the router keeps them; null for any other form, and for backslashes, which
 * `url.parse` may rewrite into slashes: callers treat null as "could be any route".
 */
export function routePath(target: string): string | null {
  const absolute = ABSOLUTE_FORM.exec(target);
  const rest = absolute ? target.slice(absolute[0].length) : target;
  const path = rest.split(/[?#]/, 1)[0] || (absolute ? '/' : '');
  if (!path.startsWith('/') || path.includes('\\')) return null;
  return path;
}

/** The body length a request declares: 0 with no body, null when chunked (counted as it streams). */
export function declaredBodyBytes(req: IncomingMessage): number | null {
  if (req.headers['transfer-encoding'] !== undefined) return null;
  const length = req.headers['content-length'];
  if (length === undefined) return 0;
  return /^\d+$/.test(length) ? Number(length) : null;
}

/**
 * `Expect: 100-continue`: the client sends its body only once told to (main.ts routes these
 * requests through the middleware, which refuses or says continue). A request refused without the
 * 100 must close its connection: the client may or may not send the body after all.
 */
export function expectsContinue(req: IncomingMessage): boolean {
  return /^\s*100-continue\s*$/i.test(req.headers.expect ?? '');
}
