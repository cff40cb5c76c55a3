import type { ServerResponse } from 'node:http';
import { PayloadTooLargeApiException, sendApiError } from './api-errors';
import { declaredBodyBytes, expectsContinue, MIB, routePath, type ApiRequest, type ParsedBody } from './request-context';

/** SPEC §10 "API": every body is capped at 1 MiB, except those of the routes below. */
const DEFAULT_LIMIT_BYTES = 1 * MIB;
const LARGE_LIMIT_BYTES = 16 * MIB;
/** `exec`, `PUT …/tools` and `…/tool-results` carry code, schemas and tool output. */
const LARGE_BODY_ROUTES: readonly (readonly [string, RegExp])[] = [
  ['POST', /^\/v1\/sessions\/[^/]+\/exec\/?$/i],
  ['PUT', /^\/v1\/sessions\/[^/]+\/tools\/?$/i],
  ['POST', /^\/v1\/sessions\/[^/]+\/runs\/[^/]+\/tool-results\/?$/i],
];
const CODE_MODE_ROUTE = /^\/v1\/sessions\/[^/]+\/(exec|wait)\/?$/i;
/**
 * The rest of a refused body is read and discarded up to this many bytes in all, so the client can
 * read the answer and reuse the connection; past it the connection is closed instead.
 */
const MAX_DRAIN_BYTES = 64 * MIB;

/** `POST …/exec` or `…/wait`: answered with a Code Mode result whatever is wrong with the request. */
export function isCodeModeCall(req: ApiRequest): boolean {
  const path = routePath(req.originalUrl ?? req.url ?? '');
  return req.method === 'POST' && path !== null && CODE_MODE_ROUTE.test(path);
}

function limitOf(req: ApiRequest): number {
  const path = routePath(req.originalUrl ?? req.url ?? '');
  if (path === null) return DEFAULT_LIMIT_BYTES;
  return LARGE_BODY_ROUTES.some(([method, route]) => req.method === method && route.test(path)) ? LARGE_LIMIT_BYTES : DEFAULT_LIMIT_BYTES;
}

/**
 * Reads every request body ourselves instead of Express's JSON parser: exec and wait must answer
 * a malformed or oversized body with a Code Mode result, not with the parser's 400/413, and the
 * content type a model's platform sends is not to be trusted. A body over its route's cap is never
 * buffered whole: a declared length over it is refused before a byte is read, a chunked one as soon
 * as the count passes it. exec/wait get `too_large` (answered 200 `failed` by their services);
 * every other route is answered 413 here.
 */
export function rawJsonBody(req: ApiRequest, res: ServerResponse, next: (error?: unknown) => void): void {
  const declared = declaredBodyBytes(req);
  // A body never read is discarded by Node after the answer: only as much as MAX_DRAIN_BYTES.
  const neverRead = (): void => {
    if (declared === null || declared > MAX_DRAIN_BYTES || expectsContinue(req)) res.setHeader('connection', 'close');
  };
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
    if (declared !== 0) neverRead();
    req.parsedBody = { kind: 'empty' };
    next();
    return;
  }
  const limitBytes = limitOf(req);
  let done = false;
  const finish = (body: ParsedBody): void => {
    if (done) return;
    done = true;
    req.parsedBody = body;
    next();
  };
  const refuse = (): void => {
    if (done) return;
    if (isCodeModeCall(req)) {
      finish({ kind: 'too_large', limitBytes });
      return;
    }
    done = true;
    sendApiError(res, new PayloadTooLargeApiException(limitBytes), { close: false });
  };
  if (declared !== null && declared > limitBytes) {
    neverRead();
    refuse();
    return;
  }
  if (expectsContinue(req)) res.writeContinue();
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limitBytes) {
      chunks.push(chunk);
      return;
    }
    chunks.length = 0;
    refuse();
    if (size > MAX_DRAIN_BYTES) req.destroy();
  });
  req.on('end', () => finish(parse(chunks, size)));
  req.on('error', () => finish({ kind: 'invalid_json' }));
}

function parse(chunks: Buffer[], size: number): ParsedBody {
  if (size === 0) return { kind: 'empty' };
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'invalid_json' };
  }
}
