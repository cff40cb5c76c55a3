import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DEFAULT_TENANT, type ApiKeyGrant } from '@codemode/config';
import { UnauthorizedApiException } from './api-errors';
import type { ApiRequest } from './request-context';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** Route templates (`/v1/sessions/:sid/exec`, `/mcp`) that need a tenant. */
const KEYED_TEMPLATE = /^\/(v1|mcp)(\/|$)/i;

const digest = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/**
 * Which tenant a request is, and with which role: the one owner of that answer. Keys are compared
 * as SHA-256 digests with `timingSafeEqual`, against every configured key whatever matched, so the
 * time taken says nothing about how much of a key was right. With no keys configured there is one
 * tenant, `default`, and every request is an operator's.
 */
export class ApiKeyRing {
  private readonly keys: readonly { digest: Buffer; grant: ApiKeyGrant }[] | null;

  constructor(keys: ReadonlyMap<string, ApiKeyGrant> | null) {
    this.keys = keys && [...keys].map(([key, grant]) => ({ digest: digest(key), grant }));
  }

  /** The tenant and role an `Authorization` header names; undefined for a missing or unknown key. */
  grantOf(authorization: string | undefined): ApiKeyGrant | undefined {
    if (this.keys === null) return { tenant: DEFAULT_TENANT, role: 'operator' };
    const match = BEARER.exec(authorization ?? '');
    const presented = digest(match?.[1] ?? '');
    let grant: ApiKeyGrant | undefined;
    for (const key of this.keys) {
      if (timingSafeEqual(presented, key.digest)) grant = key.grant;
    }
    return match ? grant : undefined;
  }
}

/**
 * Second line behind the `authenticate` middleware (which resolves the tenant before any body is
 * read): a handler under `/v1` never runs without a tenant, decided on the route template the
 * router actually matched rather than on the request's URL.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<ApiRequest>();
    if (req.tenant !== undefined) return true;
    const template = req.route?.path;
    if (typeof template === 'string' && !KEYED_TEMPLATE.test(template)) return true;
    throw new UnauthorizedApiException();
  }
}
