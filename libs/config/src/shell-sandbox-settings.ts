import { ConfigError } from './errors';
import { readRule } from './history-settings';
import type { LimitRule } from './limit-rules';

/** How shell commands are confined (SPEC §10 "Shell confinement"). */
export interface ShellSandboxSettings {
  /** `CODEMODE_SHELL_SANDBOX`: `auto` confines when bubblewrap works; `bwrap` requires it; `none` never confines. */
  readonly mode: 'auto' | 'bwrap' | 'none';
  readonly bwrapPath: string;
  readonly prlimitPath: string;
  /** `CODEMODE_SHELL_UID_RANGE`: host uids handed out one per tenant when the worker runs as root. */
  readonly uidRange: { readonly first: number; readonly last: number };
  readonly maxProcesses: number;
  readonly memoryBytes: number;
  readonly maxFileBytes: number;
  readonly maxTimeoutSeconds: number;
  readonly workspaceMaxBytes: number;
  /** `CODEMODE_WORKSPACE_MAX_FILES`: files and folders a session workspace may hold. */
  readonly workspaceMaxFiles: number;
}

/** Operator settings: a value outside its range stops the boot rather than being clamped. */
export const SHELL_SANDBOX_RULES = {
  maxProcesses: { defaultValue: 256, min: 8, max: 65_536, env: 'CODEMODE_SHELL_MAX_PROCESSES' },
  memoryBytes: { defaultValue: 1_073_741_824, min: 16_777_216, max: 1_099_511_627_776, env: 'CODEMODE_SHELL_MEMORY_BYTES' },
  maxFileBytes: { defaultValue: 268_435_456, min: 4096, max: 1_099_511_627_776, env: 'CODEMODE_SHELL_MAX_FILE_BYTES' },
  maxTimeoutSeconds: { defaultValue: 3600, min: 1, max: 86_400, env: 'CODEMODE_SHELL_MAX_TIMEOUT_SECONDS' },
  workspaceMaxBytes: { defaultValue: 1_073_741_824, min: 65_536, max: 1_099_511_627_776, env: 'CODEMODE_WORKSPACE_MAX_BYTES' },
  workspaceMaxFiles: { defaultValue: 100_000, min: 100, max: 100_000_000, env: 'CODEMODE_WORKSPACE_MAX_FILES' },
} as const satisfies Record<string, LimitRule>;

const MODES = ['auto', 'bwrap', 'none'] as const;
/** Far above system accounts and typical login uids, so a tenant's files never belong to a real user. */
const DEFAULT_UID_RANGE = { first: 200_000, last: 299_999 };

type Env = Record<string, string | undefined>;

function readUidRange(raw: string | undefined): { first: number; last: number } {
  if (raw === undefined || raw.trim() === '') return DEFAULT_UID_RANGE;
  const match = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(raw);
  const first = Number(match?.[1]);
  const last = Number(match?.[2]);
  if (!match || first < 1000 || last < first || last > 4_294_967_294) {
    throw new ConfigError(
      'CODEMODE_SHELL_UID_RANGE',
      `must be FIRST-LAST with 1000 <= FIRST <= LAST (unprivileged host uids), got "${raw}".`,
    );
  }
  return { first, last };
}

export function readShellSandboxSettings(env: Env): ShellSandboxSettings {
  const mode = (env.CODEMODE_SHELL_SANDBOX?.trim() || 'auto') as ShellSandboxSettings['mode'];
  if (!MODES.includes(mode)) throw new ConfigError('CODEMODE_SHELL_SANDBOX', `must be one of ${MODES.join(', ')}.`);
  return {
    mode,
    bwrapPath: env.CODEMODE_BWRAP_PATH?.trim() || '/usr/bin/bwrap',
    prlimitPath: '/usr/bin/prlimit',
    uidRange: readUidRange(env.CODEMODE_SHELL_UID_RANGE),
    maxProcesses: readRule(env, SHELL_SANDBOX_RULES.maxProcesses),
    memoryBytes: readRule(env, SHELL_SANDBOX_RULES.memoryBytes),
    maxFileBytes: readRule(env, SHELL_SANDBOX_RULES.maxFileBytes),
    maxTimeoutSeconds: readRule(env, SHELL_SANDBOX_RULES.maxTimeoutSeconds),
    workspaceMaxBytes: readRule(env, SHELL_SANDBOX_RULES.workspaceMaxBytes),
    workspaceMaxFiles: readRule(env, SHELL_SANDBOX_RULES.workspaceMaxFiles),
  };
}

/** `CODEMODE_TENANCY`; null when unset (the API derives it from its keys, a worker follows the API's record). */
export function readTenancy(env: Env): 'multi' | 'single' | null {
  const raw = env.CODEMODE_TENANCY?.trim() ?? '';
  if (raw === '') return null;
  if (raw === 'multi' || raw === 'single') return raw;
  throw new ConfigError('CODEMODE_TENANCY', `must be multi or single, got "${raw}".`);
}

/** The API's mode (SPEC §10 "Mode"): `CODEMODE_TENANCY` when set, else `multi` exactly when it has API keys. */
export function apiTenancy(config: {
  tenancy: 'multi' | 'single' | null;
  apiKeys: ReadonlyMap<string, string> | null;
}): 'multi' | 'single' {
  return config.tenancy ?? (config.apiKeys ? 'multi' : 'single');
}
