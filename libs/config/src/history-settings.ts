import { ConfigError } from './errors';
import { SHELL_RULES, type LimitRule } from './limit-rules';

/** Deployment-wide retention of finished runs and the cap on one run's history (SPEC §6). */
export interface HistorySettings {
  /**
   * Seconds a finished run is kept after it ends, and the age at which events are trimmed from a
   * session's log (never those of a run still live).
   */
  readonly retentionSeconds: number;
  /** Most events one run may write before it fails with the history-limit error. */
  readonly runHistoryMaxEvents: number;
  /** Most bytes of event data one run may write before it fails with the history-limit error. */
  readonly runHistoryMaxBytes: number;
}

/**
 * Defaults and allowed ranges. A value outside the range stops the boot (ConfigError naming the
 * variable) instead of being clamped: these are operator settings, not per-session requests.
 * Retention has a floor of 3 h, the longest a finished shell session is kept
 * (`OPENCLAW_BASH_JOB_TTL_MS`), since shell sessions are rebuilt from the log; live runs are never
 * trimmed, whatever the value.
 */
export const HISTORY_RULES: Readonly<Record<keyof HistorySettings, LimitRule>> = {
  retentionSeconds: { defaultValue: 86_400, min: SHELL_RULES.cleanupMs.max / 1000, max: 31_536_000, env: 'CODEMODE_RETENTION_SECONDS' },
  runHistoryMaxEvents: { defaultValue: 10_000, min: 100, max: 1_000_000, env: 'CODEMODE_RUN_HISTORY_MAX_EVENTS' },
  runHistoryMaxBytes: { defaultValue: 16_777_216, min: 1_048_576, max: 1_073_741_824, env: 'CODEMODE_RUN_HISTORY_MAX_BYTES' },
};

/** SPEC §6 defaults: 24 h retention, 10 000 events or 16 MiB per run. */
export const SPEC_DEFAULT_HISTORY: Readonly<HistorySettings> = Object.freeze({
  retentionSeconds: HISTORY_RULES.retentionSeconds.defaultValue,
  runHistoryMaxEvents: HISTORY_RULES.runHistoryMaxEvents.defaultValue,
  runHistoryMaxBytes: HISTORY_RULES.runHistoryMaxBytes.defaultValue,
});

type Env = Record<string, string | undefined>;

/** Reads an operator setting; outside its range is a ConfigError naming the variable. */
export function readRule(env: Env, rule: LimitRule): number {
  const raw = env[rule.env];
  if (raw === undefined || raw.trim() === '') return rule.defaultValue;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < rule.min || value > rule.max) {
    throw new ConfigError(rule.env, `must be an integer from ${rule.min} to ${rule.max}, got "${raw}".`);
  }
  return value;
}

/** Reads `CODEMODE_RETENTION_SECONDS`, `CODEMODE_RUN_HISTORY_MAX_EVENTS`, `CODEMODE_RUN_HISTORY_MAX_BYTES`. */
export function readHistorySettings(env: Env): HistorySettings {
  return {
    retentionSeconds: readRule(env, HISTORY_RULES.retentionSeconds),
    runHistoryMaxEvents: readRule(env, HISTORY_RULES.runHistoryMaxEvents),
    runHistoryMaxBytes: readRule(env, HISTORY_RULES.runHistoryMaxBytes),
  };
}
