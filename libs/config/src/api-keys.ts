import { ConfigError } from './errors';

const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * What a key may do (SPEC §11): `operator` everything; `agent` everything except changing tool
 * policy and deciding approvals.
 */
export const KEY_ROLES = ['operator', 'agent'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

/** One configured key: its tenant and role (`key:tenant` is an operator key). */
export interface ApiKeyGrant {
  readonly tenant: string;
  readonly role: KeyRole;
}

/**
 * Parses `CODEMODE_API_KEYS` (`key:tenant` or `key:tenant:role` pairs, comma-separated; role
 * `operator` or `agent`). Returns null when unset or blank: authentication off, one tenant
 * `default`. A key may itself contain `:`; a trailing segment names a role only when it is one.
 */
export function parseApiKeyGrants(raw: string | undefined): ReadonlyMap<string, ApiKeyGrant> | null {
  if (raw === undefined || raw.trim() === '') return null;
  const keys = new Map<string, ApiKeyGrant>();
  for (const pair of raw.split(',')) {
    const trimmed = pair.trim();
    if (trimmed === '') continue;
    let rest = trimmed;
    let role: KeyRole = 'operator';
    const last = rest.slice(rest.lastIndexOf(':') + 1);
    // `Agent` would otherwise silently read as a tenant named Agent with an operator key.
    if (
      rest.split(':').length >= 3 &&
      !(KEY_ROLES as readonly string[]).includes(last) &&
      (KEY_ROLES as readonly string[]).includes(last.toLowerCase())
    ) {
      throw new ConfigError('CODEMODE_API_KEYS', `role ${last} must be written in lower case (operator or agent).`);
    }
    if ((KEY_ROLES as readonly string[]).includes(last) && rest.split(':').length >= 3) {
      role = last as KeyRole;
      rest = rest.slice(0, rest.lastIndexOf(':'));
    }
    const at = rest.lastIndexOf(':');
    const key = rest.slice(0, at);
    const tenant = rest.slice(at + 1);
    if (at <= 0 || !TENANT_PATTERN.test(tenant)) {
      throw new ConfigError(
        'CODEMODE_API_KEYS',
        'must be comma-separated key:tenant or key:tenant:role pairs (tenant: letters, digits, _ or -; role: operator or agent).',
      );
    }
    keys.set(key, { tenant, role });
  }
  if (keys.size === 0) return null;
  return keys;
}

/** `CODEMODE_API_KEYS` as key → tenant (roles left out). */
export function parseApiKeys(raw: string | undefined): ReadonlyMap<string, string> | null {
  const grants = parseApiKeyGrants(raw);
  return grants && new Map([...grants].map(([key, grant]) => [key, grant.tenant]));
}

export const DEFAULT_TENANT = 'default';
