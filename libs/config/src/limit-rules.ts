import type { Limits, ShellConfig, ShellNumberSetting, ShellSwitch } from '@codemode/contracts';

/** Default and clamp range of one numeric setting. */
export interface LimitRule {
  readonly defaultValue: number;
  readonly min: number;
  readonly max: number;
  /** Env variable that sets the deployment default. */
  readonly env: string;
  /** Zero is a meaningful value (e.g. "no timeout") rather than "not set". */
  readonly allowZero?: boolean;
}

/** SPEC §8: defaults and clamps of the per-session Code Mode limits. */
export const LIMIT_RULES: Readonly<Record<keyof Limits, LimitRule>> = {
  timeoutMs: { defaultValue: 10_000, min: 100, max: 60_000, env: 'CODEMODE_TIMEOUT_MS' },
  memoryLimitBytes: { defaultValue: 67_108_864, min: 1_048_576, max: 1_073_741_824, env: 'CODEMODE_MEMORY_LIMIT_BYTES' },
  maxOutputBytes: { defaultValue: 65_536, min: 1024, max: 10_485_760, env: 'CODEMODE_MAX_OUTPUT_BYTES' },
  maxSnapshotBytes: { defaultValue: 10_485_760, min: 1024, max: 268_435_456, env: 'CODEMODE_MAX_SNAPSHOT_BYTES' },
  maxPendingToolCalls: { defaultValue: 16, min: 1, max: 128, env: 'CODEMODE_MAX_PENDING_TOOL_CALLS' },
  snapshotTtlSeconds: { defaultValue: 900, min: 1, max: 86_400, env: 'CODEMODE_SNAPSHOT_TTL_SECONDS' },
  // The upper bound of searchDefaultLimit is the resolved maxSearchLimit (see resolveLimits).
  searchDefaultLimit: { defaultValue: 8, min: 1, max: 50, env: 'CODEMODE_SEARCH_DEFAULT_LIMIT' },
  maxSearchLimit: { defaultValue: 50, min: 1, max: 50, env: 'CODEMODE_MAX_SEARCH_LIMIT' },
  resultsTtlSeconds: { defaultValue: 3600, min: 60, max: 86_400, env: 'CODEMODE_RESULTS_TTL_SECONDS' },
};

/** SPEC §16: `repairAttempts` of `PUT /v1/sessions/{sid}`, a session value only (no deployment env); 0 turns repair off. */
export const REPAIR_ATTEMPTS_RULE: Readonly<Omit<LimitRule, 'env'>> = { defaultValue: 2, min: 0, max: 10, allowZero: true };

/** A session's `repairAttempts` to store: a valid value clamped, anything else null (back to the default). */
export function repairAttemptsOverride(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? Math.min(value, REPAIR_ATTEMPTS_RULE.max) : null;
}

/** SPEC §7: shell defaults, named after OpenClaw's env variables. */
export const SHELL_RULES: Readonly<Record<ShellNumberSetting, LimitRule>> = {
  backgroundMs: { defaultValue: 10_000, min: 10, max: 120_000, env: 'OPENCLAW_BASH_YIELD_MS' },
  timeoutSeconds: { defaultValue: 1800, min: 0, max: 86_400, env: 'CODEMODE_SHELL_TIMEOUT_SECONDS', allowZero: true },
  cleanupMs: { defaultValue: 1_800_000, min: 60_000, max: 10_800_000, env: 'OPENCLAW_BASH_JOB_TTL_MS' },
  maxOutputChars: { defaultValue: 200_000, min: 1000, max: 2_000_000, env: 'OPENCLAW_BASH_MAX_OUTPUT_CHARS' },
  pendingMaxOutputChars: { defaultValue: 30_000, min: 1000, max: 2_000_000, env: 'OPENCLAW_BASH_PENDING_MAX_OUTPUT_CHARS' },
  inputWaitIdleMs: { defaultValue: 15_000, min: 100, max: 3_600_000, env: 'OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS' },
};

/** SPEC §7: the on/off shell settings and their defaults (a session sets them; no env changes them). */
export const SHELL_SWITCHES: Readonly<Record<ShellSwitch, boolean>> = {
  notifyOnExit: true,
  notifyOnExitEmptySuccess: false,
};

/** A usable setting: a safe positive integer (or zero where the rule allows it). */
export function isSettingValue(value: unknown, rule: LimitRule): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && (value > 0 || (rule.allowZero === true && value === 0));
}

export function clamp(value: number, rule: LimitRule, max = rule.max): number {
  return Math.min(Math.max(value, rule.min), max);
}

/** The SPEC §8 defaults, before any deployment or session override. */
export const SPEC_DEFAULT_LIMITS: Readonly<Limits> = Object.freeze(
  Object.fromEntries(Object.entries(LIMIT_RULES).map(([name, rule]) => [name, rule.defaultValue])) as Limits,
);

/** The SPEC §7 shell defaults, before any deployment or session override. */
export const SPEC_DEFAULT_SHELL: Readonly<ShellConfig> = Object.freeze({
  ...(Object.fromEntries(Object.entries(SHELL_RULES).map(([name, rule]) => [name, rule.defaultValue])) as Record<
    ShellNumberSetting,
    number
  >),
  ...SHELL_SWITCHES,
});
