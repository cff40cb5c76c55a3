import type { ServerResponse } from 'node:http';
import { INLINE_BODY_BYTES, type BodyThreads } from '../bodies/body-threads';
import type { GatePlace, LargeBodyGate } from '../bodies/large-body-gate';
import { PayloadTooLargeApiException, sendApiError } from './api-errors';
import { parseJsonBytes, type ParsedJson } from './json-bytes';
import { CODE_MODE_PATH, declaredBodyBytes, expectsContinue, MIB, routePath, type ApiRequest, type ParsedBody } from './request-context';

/** SPEC §10 "API": every body is capped at 1 MiB, except those of the routes below. */
const DEFAULT_LIMIT_BYTES = 1 * MIB;
const LARGE_LIMIT_BYTES = 16 * MIB;
/**
 * `exec`, `PUT …/tools` and `…/tool-results` carry code, schemas and tool output; the skills
 * routes Markdown (SPEC §15: a session's set up to 256 skills of 256 KiB, as much as fits in the cap;
 * a tenant's skill of 256 KiB may take more than 1 MiB as JSON escapes). A tenant tool (SPEC §18)
 * fits in 1 MiB, but its schemas are checked where it is parsed, on a body thread, as a session's are.
 */
const LARGE_BODY_ROUTES: readonly (readonly [string, RegExp])[] = [
  ['POST', /^\/v1\/sessions\/[^/]+\/exec\/?$/i],
  ['PUT', /^\/v1\/sessions\/[^/]+\/tools\/?$/i],
  ['PUT', /^\/v1\/sessions\/[^/]+\/skills\/?$/i],
  ['PUT', /^\/v1\/skills\/[^/]+\/?$/i],
  ['PUT', /^\/v1\/tools\/[^/]+\/?$/i],
  ['POST', /^\/v1\/sessions\/[^/]+\/runs\/[^/]+\/tool-results\/?$/i],
];
/**
 * The rest of a refused body is read and discarded up to this many bytes in all, so the client can
 * read the answer and reuse the connection; past it the connection is closed instead.
 */
const MAX_DRAIN_BYTES = 64 * MIB;

/** `POST …/exec` or `…/wait`: answered with a Code Mode result whatever is wrong with the request. */
export function isCodeModeCall(req: ApiRequest): boolean {
  const path = routePath(req.originalUrl ?? req.url ?? '');
  return req.method === 'POST' && path !== null && CODE_MODE_PATH.test(path);
}

function isLargeBodyRoute(req: ApiRequest): boolean {
  const path = routePath(req.originalUrl ?? req.url ?? '');
  return path !== null && LARGE_BODY_ROUTES.some(([method, route]) => req.method === method && route.test(path));
}

/**
 * Reads every request body ourselves instead of Express's JSON parser: exec and wait must answer
 * a malformed or oversized body with a Code Mode result, not with the parser's 400/413, and the
 * content type a model's platform sends is not to be trusted. A body over its route's cap is never
 * buffered whole: a declared length over it is refused before a byte is read, a chunked one as soon
 * as the count passes it. exec/wait get `too_large` (answered 200 `failed` by their services);
 * every other route is answered 413 here.
 *
 * SPEC §10 "Event loops" and "Depth": a body up to `INLINE_BODY_BYTES` is depth-checked and parsed
 * here; a larger one of a large-body route is handed to its route as bytes (it parses and checks
 * it on a body thread), a larger one of any other route is parsed on a body thread here.
 */
export function rawJsonBody(threads: BodyThreads, gate: LargeBodyGate) {
  return (req: ApiRequest, res: ServerResponse, next: (error?: unknown) => void): void => readBody(threads, gate, req, res, next);
}

function readBody(threads: BodyThreads, gate: LargeBodyGate, req: ApiRequest, res: ServerResponse, next: (error?: unknown) => void): void {
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
  const largeRoute = isLargeBodyRoute(req);
  const limitBytes = largeRoute ? LARGE_LIMIT_BYTES : DEFAULT_LIMIT_BYTES;
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
  const body = new BodyBytes(declared);
  const codeModeCall = isCodeModeCall(req);
  let size = 0;
  let place: GatePlace | null = null;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limitBytes) {
      body.append(chunk);
      // Past the default cap (a large-body route's body), it is read on, and held to its answer,
      // only with a place in its tenant's gate: an ordinary request never waits there.
      if (place === null && size > DEFAULT_LIMIT_BYTES) {
        const entered = gate.enter(req.tenant ?? '');
        place = entered;
        res.once('close', () => entered.leave());
        req.pause();
        void entered.admitted.then(() => req.resume());
      }
      return;
    }
    body.drop();
    refuse();
    if (size > MAX_DRAIN_BYTES) req.destroy();
  });
  req.on('end', () => {
    // An exec's answer waits for its cell, which may run for minutes: its place is for reading.
    if (codeModeCall) place?.leave();
    if (done) return;
    const bytes = body.take();
    if (bytes.length <= INLINE_BODY_BYTES) finish(parseJsonBytes(bytes));
    else if (largeRoute) finish({ kind: 'large', bytes });
    else {
      threads.run(req.tenant ?? '', { kind: 'json', bytes }).then(
        (parsed) => finish(parsed.kind === 'json' ? { ...parsed, large: true } : parsed),
        () => finish(UNREADABLE),
      );
    }
  });
  req.on('error', () => finish({ kind: 'invalid_json' }));
}

/** A body its thread could not parse (it died on it, e.g. out of memory) is not JSON this API reads. */
const UNREADABLE: ParsedJson = { kind: 'invalid_json' };

/**
 * A body's bytes as they arrive. With a declared length (Node's parser never passes more) they are
 * copied chunk by chunk into one buffer of that size, its own, so it moves to a body thread without
 * a copy: concatenating 16 MiB at the end held the event loop ~12 ms per request. A chunked body
 * is concatenated at the end.
 */
class BodyBytes {
  private readonly buffer: Buffer | null;
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(declared: number | null) {
    this.buffer = declared !== null && declared > INLINE_BODY_BYTES ? Buffer.allocUnsafeSlow(declared) : null;
  }

  append(chunk: Buffer): void {
    if (this.buffer) this.size += chunk.copy(this.buffer, this.size);
    else {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
  }

  drop(): void {
    this.chunks = [];
  }

  take(): Buffer {
    if (this.buffer) return this.size === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.size);
    const bytes = Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    return bytes;
  }
}
