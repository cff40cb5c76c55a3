import type { ServerResponse } from 'node:http';
import { sendApiError, UnauthorizedApiException } from './api-errors';
import type { ApiKeyRing } from './auth.guard';
import { declaredBodyBytes, expectsContinue, routePath, type ApiRequest } from './request-context';

/** A refused request's body up to this size is read and discarded so the connection stays usable. */
const SMALL_BODY_BYTES = 64 * 1024;
/** Paths outside `/v1` we read exactly as the router does: plain segments only. */
const PLAIN_PATH = /^(\/[A-Za-z0-9._~!$&'()*+,=:@-]+)*\/?$/;
const DOT_SEGMENT = /\/\.\.?(\/|$)/;
/** The routes that need a key: `/v1` and Code Mode over MCP (SPEC §14). */
const KEYED_PATH = /^\/(v1|mcp)(\/|$)/i;

/**
 * SPEC §10 "API": authentication before the body is read. Runs ahead of the body middleware and
 * sets `req.tenant` and `req.role`; a request without a valid key is answered 401 before a byte of its body is
 * read. Deny by default: only a path that is plainly outside `/v1` (the operational routes at the
 * root, or a 404) goes without a key; every other form, including absolute-form targets,
 * percent escapes, `;`, empty or dot segments, is treated as if it named a `/v1` route.
 */
export function authenticate(keys: ApiKeyRing) {
  return (req: ApiRequest, res: ServerResponse, next: () => void): void => {
    if (!needsKey(req.originalUrl ?? req.url ?? '')) {
      next();
      return;
    }
    const grant = keys.grantOf(req.headers.authorization);
    if (grant === undefined) {
      const length = declaredBodyBytes(req);
      const close = length === null || length > SMALL_BODY_BYTES || expectsContinue(req);
      sendApiError(res, new UnauthorizedApiException(), { close });
      return;
    }
    req.tenant = grant.tenant;
    req.role = grant.role;
    next();
  };
}

function needsKey(target: string): boolean {
  const path = routePath(target);
  return path === null || !PLAIN_PATH.test(path) || DOT_SEGMENT.test(path) || KEYED_PATH.test(path);
}
