import type { Limits, LimitsInput, ShellConfig, ShellConfigInput } from '@codemode/contracts';
import { clamp, isSettingValue, LIMIT_RULES, SHELL_RULES, type LimitRule } from './limit-rules';

function resolveOne(value: unknown, fallback: number, rule: LimitRule, max?: number): number {
  return clamp(isSettingValue(value, rule) ? value : fallback, rule, max);
}

/**
 * SPEC §8: a value that is not a positive integer falls back to the default, then is clamped.
 * `searchDefaultLimit` is clamped to the resolved `maxSearchLimit`.
 */
export function resolveLimits(input: LimitsInput | undefined, defaults: Limits): Limits {
  const source = input ?? {};
  const maxSearchLimit = resolveOne(source.maxSearchLimit, defaults.maxSearchLimit, LIMIT_RULES.maxSearchLimit);
  return {
    timeoutMs: resolveOne(source.timeoutMs, defaults.timeoutMs, LIMIT_RULES.timeoutMs),
    memoryLimitBytes: resolveOne(source.memoryLimitBytes, defaults.memoryLimitBytes, LIMIT_RULES.memoryLimitBytes),
    maxOutputBytes: resolveOne(source.maxOutputBytes, defaults.maxOutputBytes, LIMIT_RULES.maxOutputBytes),
    maxSnapshotBytes: resolveOne(source.maxSnapshotBytes, defaults.maxSnapshotBytes, LIMIT_RULES.maxSnapshotBytes),
    maxPendingToolCalls: resolveOne(source.maxPendingToolCalls, defaults.maxPendingToolCalls, LIMIT_RULES.maxPendingToolCalls),
    snapshotTtlSeconds: resolveOne(source.snapshotTtlSeconds, defaults.snapshotTtlSeconds, LIMIT_RULES.snapshotTtlSeconds),
    searchDefaultLimit: resolveOne(source.searchDefaultLimit, defaults.searchDefaultLimit, LIMIT_RULES.searchDefaultLimit, maxSearchLimit),
    maxSearchLimit,
    resultsTtlSeconds: resolveOne(source.resultsTtlSeconds, defaults.resultsTtlSeconds, LIMIT_RULES.resultsTtlSeconds),
  };
}

/** The overrides worth storing: only fields that are valid settings, already clamped. */
export function limitOverrides(input: LimitsInput | undefined): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const name of Object.keys(LIMIT_RULES) as (keyof Limits)[]) {
    const value = input?.[name];
    if (isSettingValue(value, LIMIT_RULES[name])) out[name] = clamp(value, LIMIT_RULES[name]);
  }
  return out;
}

export function resolveShellConfig(input: ShellConfigInput | undefined, defaults: ShellConfig): ShellConfig {
  const out = {} as ShellConfig;
  for (const name of Object.keys(SHELL_RULES) as (keyof ShellConfig)[]) {
    out[name] = resolveOne(input?.[name], defaults[name], SHELL_RULES[name]);
  }
  return out;
}

export function shellOverrides(input: ShellConfigInput | undefined): Partial<ShellConfig> {
  const out: Partial<ShellConfig> = {};
  for (const name of Object.keys(SHELL_RULES) as (keyof ShellConfig)[]) {
    const value = input?.[name];
    if (isSettingValue(value, SHELL_RULES[name])) out[name] = clamp(value, SHELL_RULES[name]);
  }
  return out;
}
