import { ConfigError } from './errors';

const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Parses `CODEMODE_API_KEYS` (`key:tenant,key:tenant`). Returns null when unset or blank:
 * authentication off, one tenant `default`.
 */
export function parseApiKeys(raw: string | undefined): ReadonlyMap<string, string> | null {
  if (raw === undefined || raw.trim() === '') return null;
  const keys = new Map<string, string>();
  for (const pair of raw.split(',')) {
    const trimmed = pair.trim();
    if (trimmed === '') continue;
    const at = trimmed.lastIndexOf(':');
    const key = trimmed.slice(0, at);
    const tenant = trimmed.slice(at + 1);
    if (at <= 0 || !TENANT_PATTERN.test(tenant)) {
      throw new ConfigError('CODEMODE_API_KEYS', 'must be comma-separated key:tenant pairs (tenant: letters, digits, _ or -).');
    }
    keys.set(key, tenant);
  }
  if (keys.size === 0) return null;
  return keys;
}

export const DEFAULT_TENANT = 'default';
