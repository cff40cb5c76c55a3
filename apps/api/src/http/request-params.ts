import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { KeyRole } from '@codemode/config';
import { BODY_TOO_DEEP_ERROR, INVALID_SESSION_ID_MESSAGE, SESSION_ID_PATTERN, type SessionRef } from '@codemode/contracts';
import { ForbiddenApiException, InvalidInputException, PayloadTooLargeApiException, UnauthorizedApiException } from './api-errors';
import type { ApiRequest, ParsedBody } from './request-context';

/** The body as the raw-body middleware parsed it. */
export const JsonBody = createParamDecorator((_: unknown, ctx: ExecutionContext): ParsedBody => {
  return ctx.switchToHttp().getRequest<ApiRequest>().parsedBody ?? { kind: 'empty' };
});

/** The tenant the auth guard resolved. */
export const Tenant = createParamDecorator((_: unknown, ctx: ExecutionContext): string =>
  tenantOf(ctx.switchToHttp().getRequest<ApiRequest>()),
);

/** The role of the request's key (SPEC §11); every request is an operator's without configured keys. */
export const Role = createParamDecorator((_: unknown, ctx: ExecutionContext): KeyRole => {
  return ctx.switchToHttp().getRequest<ApiRequest>().role ?? 'operator';
});

/** Tenant + validated session id, for REST resources (400 naming `sessionId` when malformed). */
export const Session = createParamDecorator((_: unknown, ctx: ExecutionContext): SessionRef => {
  const req = ctx.switchToHttp().getRequest<ApiRequest>();
  const sessionId = req.params?.sid ?? '';
  if (!SESSION_ID_PATTERN.test(sessionId)) {
    throw new InvalidInputException(INVALID_SESSION_ID_MESSAGE, { field: 'sessionId' });
  }
  return { tenant: tenantOf(req), sessionId };
});

/**
 * Refuses (403) a request whose key may not `action` (SPEC §11): only operator keys change tool
 * policy or decide approvals. Without configured keys every request is an operator's.
 */
export function requireOperator(req: ApiRequest, action: string): void {
  if (req.role === 'agent') throw new ForbiddenApiException(`this API key has the agent role; an operator key is needed to ${action}.`);
}

/** The guard must have resolved a tenant; a route it did not guard never falls back to one. */
function tenantOf(req: ApiRequest): string {
  if (req.tenant === undefined) throw new UnauthorizedApiException();
  return req.tenant;
}

/** A JSON object body for REST routes: anything else is a 400. */
export function requireObjectBody(body: ParsedBody): Record<string, unknown> {
  // The body middleware answers 413 itself; this only keeps a too-large body from reading as "not an object".
  if (body.kind === 'too_large') throw new PayloadTooLargeApiException(body.limitBytes);
  if (body.kind === 'too_deep') throw new InvalidInputException(BODY_TOO_DEEP_ERROR);
  if (body.kind === 'json' && typeof body.value === 'object' && body.value !== null && !Array.isArray(body.value)) {
    return body.value as Record<string, unknown>;
  }
  throw new InvalidInputException('request body must be a JSON object.');
}
