import type { ServerResponse } from 'node:http';
import { BadRequestException } from '@nestjs/common';
import type { CodeModeResult } from '@codemode/contracts';
import type { Logger } from '@codemode/telemetry';
import { answerError, sendJson } from '../http/all-exceptions.filter';
import { UnauthorizedApiException } from '../http/api-errors';
import { CODE_MODE_PATH, routePath, type ApiRequest } from '../http/request-context';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { requestsIn, retryAfter } from '../quotas/tenant-rate.guard';
import type { CodeModeCalls } from './code-mode-calls';

/** The route templates the access log and the duration metric label the two calls by. */
const TEMPLATES = { exec: '/v1/sessions/:sid/exec', wait: '/v1/sessions/:sid/wait' } as const;

/**
 * REST `exec` and `wait`, the two calls a model makes most (issue 41 item 3), served as the last
 * middleware instead of through Nest's router, guards and parameter decorators: per call, those
 * cost more than the call's own HTTP work. Nothing of the request rules is copied here: the
 * request id, access log, close watch, duration metric, key check and body cap are the
 * middleware every route passes first (main.ts); the rate, in-flight and storage quotas are
 * `CodeModeCalls`' one admission, as over MCP; every error is `answerError`'s, as for every other
 * route. Any other request goes on to Nest.
 */
export function codeModeRoute(calls: CodeModeCalls, logger: Logger) {
  return (req: ApiRequest, res: ServerResponse, next: () => void): void => {
    const match = req.method === 'POST' ? CODE_MODE_PATH.exec(routePath(req.originalUrl ?? req.url ?? '') ?? '') : null;
    if (!match) {
      next();
      return;
    }
    answer(req, res, match[2].toLowerCase() as keyof typeof TEMPLATES, match[1], calls).catch((error: unknown) => {
      if (error instanceof TenantLimitException) retryAfter(res, error);
      answerError(error, req, res, logger);
    });
  };
}

async function answer(
  req: ApiRequest,
  res: ServerResponse,
  call: keyof typeof TEMPLATES,
  rawSid: string,
  calls: CodeModeCalls,
): Promise<void> {
  const sessionId = decodedSegment(rawSid);
  // What the router sets on a match: the access log and the duration metric read them.
  req.route = { path: TEMPLATES[call] };
  req.params = { sid: sessionId };
  // The key check refuses every unkeyed request before its body is read; this is its second line.
  const tenant = req.tenant;
  if (tenant === undefined) throw new UnauthorizedApiException();
  const body = req.parsedBody ?? { kind: 'empty' };
  // Node joins a repeated header into one string (only set-cookie stays a list).
  const header = req.headers['idempotency-key'];
  const idempotencyKey = typeof header === 'string' ? header : undefined;
  // The request's rate token is taken in the call's admission script, beside its in-flight slot.
  const result: CodeModeResult =
    call === 'exec'
      ? await calls.exec(tenant, sessionId, body, idempotencyKey, requestsIn(req))
      : await calls.wait(tenant, sessionId, body, idempotencyKey, requestsIn(req));
  sendJson(res, 200, result);
}

/** A path segment decoded as Express decodes a route parameter: an undecodable one is a 400 (a Code Mode result). */
function decodedSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestException(`Failed to decode param '${raw}'`);
  }
}
