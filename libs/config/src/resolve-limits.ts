import type { Limits, LimitsInput, ShellConfig, ShellConfigInput, ShellNumberSetting, ShellSwitch } from '@codemode/contracts';
import { clamp, isSettingValue, LIMIT_RULES, SHELL_RULES, SHELL_SWITCHES, type LimitRule } from './limit-rules';
import { apiTenancy } from './shell-sandbox-settings';
import { ceilingsFor, type TenancySettings } from './tenancy-settings';

function resolveOne(value: unknown, fallback: number, rule: LimitRule, max = Number.POSITIVE_INFINITY): number {
  return clamp(isSettingValue(value, rule) ? value : fallback, rule, Math.min(rule.max, max));
}

/**
 * SPEC §8: a value that is not a positive integer falls back to the default, then is clamped.
 * SPEC §10 "Ceilings": the upper bound is `min(rule maximum, ceiling)`, for a session's value and
 * for a deployment default alike. `searchDefaultLimit` is also clamped to the resolved `maxSearchLimit`.
 */
export function resolveLimits(input: LimitsInput | undefined, defaults: Limits, ceilings: Partial<Limits> = {}): Limits {
  const source = input ?? {};
  const one = (name: keyof Limits, max = Number.POSITIVE_INFINITY): number =>
    resolveOne(source[name], defaults[name], LIMIT_RULES[name], Math.min(ceilings[name] ?? Number.POSITIVE_INFINITY, max));
  const maxSearchLimit = one('maxSearchLimit');
  return {
    timeoutMs: one('timeoutMs'),
    memoryLimitBytes: one('memoryLimitBytes'),
    maxOutputBytes: one('maxOutputBytes'),
    maxSnapshotBytes: one('maxSnapshotBytes'),
    maxPendingToolCalls: one('maxPendingToolCalls'),
    snapshotTtlSeconds: one('snapshotTtlSeconds'),
    searchDefaultLimit: one('searchDefaultLimit', maxSearchLimit),
    maxSearchLimit,
    resultsTtlSeconds: one('resultsTtlSeconds'),
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

/**
 * Shell settings of a session. `maxTimeoutSeconds` (SPEC §10, `CODEMODE_SHELL_MAX_TIMEOUT_SECONDS`)
 * caps `timeoutSeconds`; `0` stays `0`, which already means "the cap".
 */
export function resolveShellConfig(input: ShellConfigInput | undefined, defaults: ShellConfig, maxTimeoutSeconds?: number): ShellConfig {
  const out = {} as ShellConfig;
  for (const name of Object.keys(SHELL_RULES) as ShellNumberSetting[]) {
    out[name] = resolveOne(input?.[name], defaults[name], SHELL_RULES[name]);
  }
  // A switch that is not a boolean falls back to the default, as a number that is not a setting does.
  for (const name of Object.keys(SHELL_SWITCHES) as ShellSwitch[]) {
    const value = input?.[name];
    out[name] = typeof value === 'boolean' ? value : defaults[name];
  }
  if (maxTimeoutSeconds !== undefined && out.timeoutSeconds > maxTimeoutSeconds) out.timeoutSeconds = maxTimeoutSeconds;
  return out;
}

export function shellOverrides(input: ShellConfigInput | undefined): Partial<ShellConfig> {
  const out: Partial<ShellConfig> = {};
  for (const name of Object.keys(SHELL_RULES) as ShellNumberSetting[]) {
    const value = input?.[name];
    if (isSettingValue(value, SHELL_RULES[name])) out[name] = clamp(value, SHELL_RULES[name]);
  }
  for (const name of Object.keys(SHELL_SWITCHES) as ShellSwitch[]) {
    const value = input?.[name];
    if (typeof value === 'boolean') out[name] = value;
  }
  return out;
}

/** What the effective settings are computed from: a slice of `AppConfig`. */
export interface EffectiveSettingsSource {
  readonly limitDefaults: Limits;
  readonly shellDefaults: ShellConfig;
  readonly tenancySettings: TenancySettings;
  readonly shellSandbox: { readonly maxTimeoutSeconds: number };
  /** The API's tenancy mode comes from these (`apiTenancy`): multi-tenant mode has default ceilings. */
  readonly tenancy: 'multi' | 'single' | null;
  readonly apiKeys: ReadonlyMap<string, string> | null;
}

/**
 * The one answer to "which limits does this tenant's session run with": its stored overrides over
 * the deployment defaults, each clamped to `min(rule maximum, the tenant's ceiling)` (SPEC §10).
 * `GET`/`PUT /sessions/{sid}`, `exec` and `wait` all use it, so the answer and the run agree.
 * Overrides are stored unclamped by ceilings, so a changed ceiling applies to existing sessions.
 */
export function effectiveLimits(config: EffectiveSettingsSource, tenant: string, stored: LimitsInput | undefined): Limits {
  return resolveLimits(stored, config.limitDefaults, ceilingsFor(config.tenancySettings, tenant, apiTenancy(config)));
}

/** A session's shell settings, `timeoutSeconds` capped by `CODEMODE_SHELL_MAX_TIMEOUT_SECONDS` (SPEC §10). */
export function effectiveShellConfig(config: EffectiveSettingsSource, stored: ShellConfigInput | undefined): ShellConfig {
  return resolveShellConfig(stored, config.shellDefaults, config.shellSandbox.maxTimeoutSeconds);
}
