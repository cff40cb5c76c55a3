import { availableParallelism, hostname, totalmem } from 'node:os';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Limits, ShellConfig, ShellNumberSetting } from '@codemode/contracts';
import { parseApiKeyGrants, parseApiKeys, type ApiKeyGrant } from './api-keys';
import { ConfigError } from './errors';
import { readEventStreamSettings, type EventStreamSettings } from './event-stream-settings';
import { readHistorySettings, type HistorySettings } from './history-settings';
import { clamp, LIMIT_RULES, SHELL_RULES, SHELL_SWITCHES, SPEC_DEFAULT_LIMITS, type LimitRule } from './limit-rules';
import { readRedisSettings, type RedisSettings } from './redis-settings';
import { resolveLimits } from './resolve-limits';
import { readSecretsKeys, type SecretsKeys } from './secrets-key-settings';
import { readShellSandboxSettings, readTenancy, type ShellSandboxSettings } from './shell-sandbox-settings';
import { readTenancySettings, type TenancySettings } from './tenancy-settings';

/** Everything a process reads from its environment, validated once at boot. */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  readonly redis: RedisSettings;
  /** Prefix of every Redis key and queue; tests give each stack its own. */
  readonly keyPrefix: string;
  /** null: authentication off, one tenant `default`. */
  readonly apiKeys: ReadonlyMap<string, string> | null;
  /** The same keys with their roles (SPEC §11); null when authentication is off. */
  readonly apiKeyGrants: ReadonlyMap<string, ApiKeyGrant> | null;
  readonly workerMetricsPort: number;
  /** `API_METRICS_PORT` [9465]: where a multi-tenant API serves `/metrics` instead of its public port (SPEC §10). */
  readonly apiMetricsPort: number;
  readonly workerId: string;
  readonly sandboxThreads: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly limitDefaults: Limits;
  readonly shellDefaults: ShellConfig;
  /** Extra time the API waits past a started run's budget before it stops waiting. */
  readonly replyGraceMs: number;
  readonly version: string;
  /** Root of the per-session workspaces the core tools and shell commands run in. */
  readonly workspaceRoot: string;
  /** `CODEMODE_WORKSPACE_SWEEP_SECONDS` [600]: how often a worker removes workspaces whose session is gone. */
  readonly workspaceSweepSeconds: number;
  /** Environment shell commands start from: the worker's, minus this service's own settings. */
  readonly shellBaseEnv: Readonly<Record<string, string>>;
  /** `CODEMODE_MCP_SERVERS` as given (JSON); parsed by libs/tools. */
  readonly mcpServersJson: string | null;
  /** Per-tenant webhook signing secrets from `CODEMODE_WEBHOOK_SECRETS` (`tenant:secret,…`). */
  readonly webhookSecrets: ReadonlyMap<string, string>;
  /** `CODEMODE_SECRETS_KEY` (and `_PREVIOUS`): what tenant tool headers are encrypted under (SPEC §18); null when unset. */
  readonly secretsKeys: SecretsKeys | null;
  /** Worker presence TTL (ms): how long a silent worker is still considered alive. */
  readonly presenceTtlMs: number;
  /**
   * `CODEMODE_ALWAYS_REPLAY=1` (testing recovery): a replay-safe run is dropped from memory as
   * soon as it parks, so every `wait` rebuilds it by replay (SPEC §6).
   */
  readonly alwaysReplay: boolean;
  /**
   * Cells one worker runs at once. A cell waiting on a tool or timer holds no sandbox thread, so
   * this is several per thread; CPU-bound cells share their threads.
   */
  readonly cellConcurrency: number;
  /** Retention of finished runs and the per-run history cap (SPEC §6). */
  readonly history: HistorySettings;
  /**
   * `CODEMODE_COMPACT_RUNS` [1]: a finished run is kept compact (SPEC §13): its request and result
   * data compressed in the log, its hash without what a view derives. 0 while processes of a
   * release that cannot read that form still run (a rolling upgrade).
   */
  readonly compactRuns: boolean;
  /**
   * `CODEMODE_TENANCY` (SPEC §10 "Mode"). The API is `multi` with API keys unless this says
   * otherwise; a worker with null follows the mode the API recorded in Redis.
   */
  readonly tenancy: 'multi' | 'single' | null;
  readonly shellSandbox: ShellSandboxSettings;
  /** Quotas, ceilings, webhook address allowances and expiry of tenant data (SPEC §10). */
  readonly tenancySettings: TenancySettings;
  /** `CODEMODE_APPROVAL_TIMEOUT_SECONDS` [600]: an undecided approval is then denied (SPEC §11). */
  readonly approvalTimeoutSeconds: number;
  /** `CODEMODE_NODE_INVOKE_TIMEOUT_MS` [30000]: the deadline of a cell's `nodes.invoke` (SPEC §17). */
  readonly nodeInvokeTimeoutMs: number;
  /**
   * `CODEMODE_WORKER_PARKED_MEMORY_BYTES` [a quarter of the machine's memory]: wasm memory the VMs
   * parked in this worker may keep; past it the coldest leave for their images (SPEC §10).
   */
  readonly workerParkedMemoryBytes: number;
  /** `CODEMODE_APPROVAL_WEBHOOK`: where `approval.requested` is posted, signed like tool webhooks; null: nowhere. */
  readonly approvalWebhook: string | null;
  /** SSE buffer bound and lag limit (SPEC §10 "Event streams"). */
  readonly eventStreams: EventStreamSettings;
}

type Env = Record<string, string | undefined>;
/** Default cells per sandbox thread: most of a cell's life is spent waiting on tools. */
const CELLS_PER_THREAD = 8;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}".`);
  }
  return value;
}

function readFlag(env: Env, name: string, fallback = false): boolean {
  const raw = env[name]?.trim() ?? '';
  if (raw === '') return fallback;
  if (raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(name, `must be 1 or 0, got "${raw}".`);
}

function readSetting(env: Env, rule: LimitRule): number {
  const raw = env[rule.env];
  if (raw === undefined || raw.trim() === '') return rule.defaultValue;
  const value = Number(raw);
  const ok = Number.isSafeInteger(value) && (value > 0 || (rule.allowZero === true && value === 0));
  if (!ok) throw new ConfigError(rule.env, `must be a positive integer, got "${raw}".`);
  return clamp(value, rule);
}

function readLimitDefaults(env: Env): Limits {
  const raw = {} as Record<keyof Limits, number>;
  for (const name of Object.keys(LIMIT_RULES) as (keyof Limits)[]) raw[name] = readSetting(env, LIMIT_RULES[name]);
  return resolveLimits(raw, SPEC_DEFAULT_LIMITS);
}

function readShellDefaults(env: Env): ShellConfig {
  const out = { ...SHELL_SWITCHES } as ShellConfig;
  for (const name of Object.keys(SHELL_RULES) as ShellNumberSetting[]) out[name] = readSetting(env, SHELL_RULES[name]);
  return out;
}

/** Reads and validates the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env, version = '0.0.0'): AppConfig {
  const apiKeys = parseApiKeys(env.CODEMODE_API_KEYS);
  const logLevel = (env.LOG_LEVEL ?? 'info').trim() as AppConfig['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}.`);
  const keyPrefix = env.CODEMODE_KEY_PREFIX?.trim() || 'cm';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(keyPrefix)) {
    throw new ConfigError('CODEMODE_KEY_PREFIX', 'must be 1-32 letters, digits, _ or -.');
  }
  const sandboxThreads = readInt(env, 'CODEMODE_SANDBOX_THREADS', Math.max(2, availableParallelism()), 1, 256);
  return {
    port: readInt(env, 'PORT', 3000, 0, 65535),
    // Without API keys anyone who can reach the port owns the default tenant: stay on loopback.
    host: env.HOST?.trim() || (apiKeys ? '0.0.0.0' : '127.0.0.1'),
    redis: readRedisSettings(env),
    keyPrefix,
    apiKeys,
    apiKeyGrants: parseApiKeyGrants(env.CODEMODE_API_KEYS),
    workerMetricsPort: readInt(env, 'WORKER_METRICS_PORT', 9464, 0, 65535),
    apiMetricsPort: readInt(env, 'API_METRICS_PORT', 9465, 0, 65535),
    workerId: env.CODEMODE_WORKER_ID?.trim() || `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    sandboxThreads,
    logLevel,
    limitDefaults: readLimitDefaults(env),
    shellDefaults: readShellDefaults(env),
    replyGraceMs: readInt(env, 'CODEMODE_REPLY_GRACE_MS', 2000, 0, 60_000),
    version,
    workspaceRoot: resolve(env.CODEMODE_WORKSPACE_ROOT?.trim() || './.data/workspaces'),
    workspaceSweepSeconds: readInt(env, 'CODEMODE_WORKSPACE_SWEEP_SECONDS', 600, 1, 86_400),
    shellBaseEnv: shellBaseEnv(env),
    mcpServersJson: env.CODEMODE_MCP_SERVERS?.trim() || null,
    webhookSecrets: parseWebhookSecrets(env.CODEMODE_WEBHOOK_SECRETS),
    secretsKeys: readSecretsKeys(env),
    presenceTtlMs: readInt(env, 'CODEMODE_LEASE_MS', 10_000, 1000, 600_000),
    alwaysReplay: readFlag(env, 'CODEMODE_ALWAYS_REPLAY'),
    cellConcurrency: readInt(env, 'CODEMODE_CELL_CONCURRENCY', sandboxThreads * CELLS_PER_THREAD, 1, 4096),
    history: readHistorySettings(env),
    compactRuns: readFlag(env, 'CODEMODE_COMPACT_RUNS', true),
    tenancy: readTenancy(env),
    shellSandbox: readShellSandboxSettings(env),
    tenancySettings: readTenancySettings(env),
    approvalTimeoutSeconds: readInt(env, 'CODEMODE_APPROVAL_TIMEOUT_SECONDS', 600, 1, 604_800),
    nodeInvokeTimeoutMs: readInt(env, 'CODEMODE_NODE_INVOKE_TIMEOUT_MS', 30_000, 100, 600_000),
    approvalWebhook: readWebhookUrl(env, 'CODEMODE_APPROVAL_WEBHOOK'),
    workerParkedMemoryBytes: readInt(
      env,
      'CODEMODE_WORKER_PARKED_MEMORY_BYTES',
      Math.floor(totalmem() / 4),
      16_777_216,
      Number.MAX_SAFE_INTEGER,
    ),
    eventStreams: readEventStreamSettings(env),
  };
}

/**
 * Commands get the worker's environment except this service's own variables, which hold keys,
 * secrets and addresses a cell has no business reading.
 */
function shellBaseEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (/^(CODEMODE_|REDIS_|WORKER_METRICS_|API_METRICS_|NODE_OPTIONS$|LOG_LEVEL$|PORT$|HOST$)/.test(name)) continue;
    out[name] = value;
  }
  return out;
}

function readWebhookUrl(env: Env, name: string): string | null {
  const raw = env[name]?.trim() ?? '';
  if (raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an http or https URL, got "${raw}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must be an http or https URL, got "${raw}".`);
  return url.toString();
}

function parseWebhookSecrets(raw: string | undefined): ReadonlyMap<string, string> {
  const secrets = new Map<string, string>();
  for (const pair of (raw ?? '').split(',')) {
    const trimmed = pair.trim();
    if (trimmed === '') continue;
    const at = trimmed.indexOf(':');
    if (at <= 0 || at === trimmed.length - 1) {
      throw new ConfigError('CODEMODE_WEBHOOK_SECRETS', 'must be comma-separated tenant:secret pairs.');
    }
    secrets.set(trimmed.slice(0, at), trimmed.slice(at + 1));
  }
  return secrets;
}
