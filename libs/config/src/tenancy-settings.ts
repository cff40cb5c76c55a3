import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Limits } from '@codemode/contracts';
import { ConfigError } from './errors';
import { readRule } from './history-settings';
import { LIMIT_RULES, type LimitRule } from './limit-rules';

/** SPEC §10 "Quotas per tenant", counted fleet-wide except `maxShellCalls` (per worker). */
export interface TenantQuotas {
  /** `exec` + `wait` calls in flight at once. */
  readonly maxInflight: number;
  readonly maxParkedRuns: number;
  /** Total bytes of one tenant's parked-run images. */
  readonly maxParkedBytes: number;
  /** Running shell sessions. */
  readonly maxShellProcesses: number;
  /** REST `shell/exec` and `process` calls in flight at once on one worker (each may wait up to its yield or poll timeout). */
  readonly maxShellCalls: number;
  /** Open event streams (SSE). */
  readonly maxStreams: number;
  /** Bytes the tenant keeps in Redis (event data, transcripts, tools, stores, results, parked images). */
  readonly maxStoredBytes: number;
  /** Requests per second under `/v1` (token bucket refill)… */
  readonly rate: number;
  /** …and the bucket's size. */
  readonly burst: number;
}

export const QUOTA_RULES: Readonly<Record<keyof TenantQuotas, LimitRule>> = {
  maxInflight: { defaultValue: 32, min: 1, max: 1_000_000, env: 'CODEMODE_TENANT_MAX_INFLIGHT' },
  maxParkedRuns: { defaultValue: 64, min: 1, max: 10_000_000, env: 'CODEMODE_TENANT_MAX_PARKED_RUNS' },
  maxParkedBytes: { defaultValue: 1_073_741_824, min: 1024, max: 1_099_511_627_776, env: 'CODEMODE_TENANT_MAX_PARKED_BYTES' },
  maxShellProcesses: { defaultValue: 16, min: 1, max: 100_000, env: 'CODEMODE_TENANT_MAX_SHELL_PROCESSES' },
  maxShellCalls: { defaultValue: 32, min: 1, max: 100_000, env: 'CODEMODE_TENANT_MAX_SHELL_CALLS' },
  maxStreams: { defaultValue: 8, min: 1, max: 100_000, env: 'CODEMODE_TENANT_MAX_STREAMS' },
  maxStoredBytes: { defaultValue: 1_073_741_824, min: 65_536, max: 1_099_511_627_776, env: 'CODEMODE_TENANT_MAX_STORED_BYTES' },
  rate: { defaultValue: 50, min: 1, max: 1_000_000, env: 'CODEMODE_TENANT_RATE' },
  burst: { defaultValue: 100, min: 1, max: 1_000_000, env: 'CODEMODE_TENANT_BURST' },
};

/** Per-tenant overrides from `CODEMODE_TENANTS_FILE` (`{"<tenant>": {"quotas": {...}, "ceilings": {...}}}`). */
export interface TenantOverrides {
  readonly quotas: Partial<TenantQuotas>;
  readonly ceilings: Partial<Limits>;
}

export interface TenancySettings {
  /** Every quota at its env value or SPEC default: what each tenant gets in `multi` mode. */
  readonly quotas: TenantQuotas;
  /** Only the quota variables an operator set: all that applies in `single` mode. */
  readonly explicitQuotas: Partial<TenantQuotas>;
  /** `CODEMODE_CEILING_<NAME>` per SPEC §8 limit: a session's value is clamped to min(rule max, ceiling). */
  readonly ceilings: Partial<Limits>;
  readonly tenants: ReadonlyMap<string, TenantOverrides>;
  /** `CODEMODE_WEBHOOK_ALLOW`: hosts, IPs or CIDRs client tool endpoints may reach in spite of the address rules. */
  readonly webhookAllow: readonly string[];
  /** `CODEMODE_SESSION_TTL_SECONDS`: sessions, stores, tool registrations and idempotency keys expire this long after their last write. */
  readonly sessionTtlSeconds: number;
  /** `CODEMODE_METRICS_TENANT_LABEL=1`: tenant label on quota metrics (off: unbounded label sets). */
  readonly metricsTenantLabel: boolean;
  /** `CODEMODE_QUOTA_LEASE_MS`: a crashed process's quota slots (in-flight calls, streams, shell sessions) free within this. */
  readonly quotaLeaseMs: number;
}

type Env = Record<string, string | undefined>;

const QUOTA_LEASE_RULE: LimitRule = { defaultValue: 30_000, min: 1000, max: 600_000, env: 'CODEMODE_QUOTA_LEASE_MS' };
const SESSION_TTL_RULE: LimitRule = { defaultValue: 2_592_000, min: 60, max: 31_536_000, env: 'CODEMODE_SESSION_TTL_SECONDS' };

/** `CODEMODE_CEILING_MEMORY_LIMIT_BYTES` for `memoryLimitBytes`, and so on: the limit's env name after `CODEMODE_`. */
export function ceilingEnv(name: keyof Limits): string {
  return LIMIT_RULES[name].env.replace(/^CODEMODE_/, 'CODEMODE_CEILING_');
}

function readCeilings(env: Env): Partial<Limits> {
  const out: Partial<Record<keyof Limits, number>> = {};
  for (const name of Object.keys(LIMIT_RULES) as (keyof Limits)[]) {
    const rule = LIMIT_RULES[name];
    const variable = ceilingEnv(name);
    if (env[variable] !== undefined && env[variable].trim() !== '') out[name] = readRule(env, { ...rule, env: variable });
  }
  return out;
}

function readQuotas(env: Env): { quotas: TenantQuotas; explicit: Partial<TenantQuotas> } {
  const quotas = {} as Record<keyof TenantQuotas, number>;
  const explicit: Partial<Record<keyof TenantQuotas, number>> = {};
  for (const name of Object.keys(QUOTA_RULES) as (keyof TenantQuotas)[]) {
    quotas[name] = readRule(env, QUOTA_RULES[name]);
    if (env[QUOTA_RULES[name].env]?.trim()) explicit[name] = quotas[name];
  }
  return { quotas, explicit };
}

/** Parses `CODEMODE_TENANTS_FILE`; every value is checked against the same ranges as its variable. */
export function parseTenantsFile(text: string, source = 'CODEMODE_TENANTS_FILE'): ReadonlyMap<string, TenantOverrides> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(source, `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isObject(parsed)) throw new ConfigError(source, 'must hold a JSON object of tenant → {quotas?, ceilings?}.');
  const out = new Map<string, TenantOverrides>();
  for (const [tenant, entry] of Object.entries(parsed)) {
    if (!isObject(entry)) throw new ConfigError(source, `tenant ${tenant}: must be an object with quotas and/or ceilings.`);
    out.set(tenant, {
      quotas: pickNumbers(entry.quotas, QUOTA_RULES, `${source} tenant ${tenant} quotas`),
      ceilings: pickNumbers(entry.ceilings, LIMIT_RULES, `${source} tenant ${tenant} ceilings`),
    });
  }
  return out;
}

function pickNumbers<K extends string>(raw: unknown, rules: Readonly<Record<K, LimitRule>>, where: string): Partial<Record<K, number>> {
  if (raw === undefined) return {};
  if (!isObject(raw)) throw new ConfigError(where, 'must be an object.');
  const out: Partial<Record<K, number>> = {};
  for (const [name, value] of Object.entries(raw)) {
    const rule = (rules as Record<string, LimitRule | undefined>)[name];
    if (!rule) throw new ConfigError(where, `has an unknown name ${JSON.stringify(name)}; known: ${Object.keys(rules).join(', ')}.`);
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < rule.min || value > rule.max) {
      throw new ConfigError(where, `${name} must be an integer from ${rule.min} to ${rule.max}.`);
    }
    out[name as K] = value;
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function readTenancySettings(env: Env, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): TenancySettings {
  const { quotas, explicit } = readQuotas(env);
  const file = env.CODEMODE_TENANTS_FILE?.trim();
  let tenants: ReadonlyMap<string, TenantOverrides> = new Map();
  if (file) {
    let text: string;
    try {
      text = readFile(file);
    } catch (error) {
      throw new ConfigError('CODEMODE_TENANTS_FILE', `cannot be read (${file}): ${error instanceof Error ? error.message : String(error)}`);
    }
    tenants = parseTenantsFile(text);
  }
  const metricsLabel = env.CODEMODE_METRICS_TENANT_LABEL?.trim() ?? '';
  if (!['', '0', '1'].includes(metricsLabel))
    throw new ConfigError('CODEMODE_METRICS_TENANT_LABEL', `must be 1 or 0, got "${metricsLabel}".`);
  return {
    quotas,
    explicitQuotas: explicit,
    ceilings: readCeilings(env),
    tenants,
    webhookAllow: readWebhookAllow(env.CODEMODE_WEBHOOK_ALLOW),
    sessionTtlSeconds: readRule(env, SESSION_TTL_RULE),
    metricsTenantLabel: metricsLabel === '1',
    quotaLeaseMs: readRule(env, QUOTA_LEASE_RULE),
  };
}

const HOST_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;

/** `CODEMODE_WEBHOOK_ALLOW`: each entry a host name, an IP or a CIDR; anything else stops the boot. */
function readWebhookAllow(raw: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address.replace(/^\[|\]$/g, ''));
    const cidrOk = bits === undefined || (family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
    if (extra !== undefined || !cidrOk || (family === 0 && (bits !== undefined || !HOST_NAME.test(address)))) {
      throw new ConfigError('CODEMODE_WEBHOOK_ALLOW', `has an entry that is not a host name, IP or CIDR: "${entry}".`);
    }
  }
  return entries;
}

/**
 * A tenant's quotas in `mode` (SPEC §10): in `multi`, the env defaults; in `single`, only the
 * variables set explicitly (the rest unlimited); either way overridden by the tenants file.
 */
export function quotasFor(settings: TenancySettings, tenant: string, mode: 'multi' | 'single'): TenantQuotas {
  const base: Partial<TenantQuotas> = mode === 'multi' ? settings.quotas : settings.explicitQuotas;
  const own = settings.tenants.get(tenant)?.quotas ?? {};
  const out = {} as Record<keyof TenantQuotas, number>;
  for (const name of Object.keys(QUOTA_RULES) as (keyof TenantQuotas)[]) out[name] = own[name] ?? base[name] ?? Number.POSITIVE_INFINITY;
  return out;
}

/** SPEC §10 "Parked memory": ceilings that hold in multi-tenant mode unless the deployment sets its own. */
export const MULTI_TENANT_DEFAULT_CEILINGS: Readonly<Partial<Limits>> = { memoryLimitBytes: 268_435_456 };

/**
 * A tenant's ceilings: the deployment's (in `multi` mode over `MULTI_TENANT_DEFAULT_CEILINGS`),
 * each replaced by the tenants file's where it names one.
 */
export function ceilingsFor(settings: TenancySettings, tenant: string, mode: 'multi' | 'single' = 'single'): Partial<Limits> {
  const defaults = mode === 'multi' ? MULTI_TENANT_DEFAULT_CEILINGS : {};
  return { ...defaults, ...settings.ceilings, ...(settings.tenants.get(tenant)?.ceilings ?? {}) };
}
