import { Inject, Injectable } from '@nestjs/common';
import { PolicySchema, type Policy, type SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { PolicyStore } from '@codemode/events';
import { mergePolicies } from '@codemode/tools';
import { InvalidInputException } from '../http/api-errors';
import { APP_CONFIG } from '../core/tokens';

/** The stored policy when none was ever put: no rules, every call allowed. */
const EMPTY_POLICY: Policy = { rules: [] };

/** Tool policies over REST (SPEC §11): the tenant's (`/v1/policy`) and a session's `policy` field. */
@Injectable()
export class PolicyService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: PolicyStore,
  ) {}

  async tenant(tenant: string): Promise<Policy> {
    return (await this.store.tenant(tenant)) ?? EMPTY_POLICY;
  }

  async putTenant(tenant: string, body: Record<string, unknown>): Promise<Policy> {
    return this.store.putTenant(tenant, parsePolicy(body, ''));
  }

  async session(ref: SessionRef): Promise<Policy | null> {
    return this.store.session(ref);
  }

  /** The policy the session's cells run under: the tenant's merged with the session's (one read of both). */
  async effective(ref: SessionRef): Promise<Policy> {
    return mergePolicies(...(await this.store.both(ref)));
  }

  /**
   * Stores a session's `policy` (already checked with `parseSessionPolicy`) once the session
   * exists; `null` removes the session's own policy.
   */
  async putSession(ref: SessionRef, policy: Policy | null): Promise<Policy | null> {
    if (policy === null) return this.store.clearSession(ref);
    return this.store.putSession(ref, policy, this.config.tenancySettings.sessionTtlSeconds * 1000);
  }
}

/** A session `PUT`'s `policy` field, checked before anything is written (400 naming the field); null: remove it. */
export function parseSessionPolicy(value: unknown): Policy | null {
  return value === null ? null : parsePolicy(value, 'policy');
}

function parsePolicy(value: unknown, at: string): Policy {
  const parsed = PolicySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = [at, ...issue.path.map(String)].filter((part) => part !== '').join('.') || 'body';
  throw new InvalidInputException(`${field}: ${issue.message}`, { field });
}
