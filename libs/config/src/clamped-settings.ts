import type { ClampedSetting, Limits, LimitsInput, ShellConfig, ShellConfigInput } from '@codemode/contracts';
import { LIMIT_RULES, SHELL_RULES } from './limit-rules';

/**
 * What a session `PUT` asked for that the session does not get (SPEC §8: a value that is not a
 * positive integer falls back to the default, then is clamped; SPEC §10: and capped by the
 * tenant's ceiling): each numeric setting the request named whose effective value differs, with
 * the value it runs with, so a clamp never goes by without a word. Settings not named are not
 * listed, whatever their values.
 */
export function clampedSettings(
  requested: { codeMode?: LimitsInput; shell?: ShellConfigInput },
  applied: { codeMode: Limits; shell: ShellConfig },
): ClampedSetting[] {
  const out: ClampedSetting[] = [];
  const compare = <K extends string>(
    group: 'codeMode' | 'shell',
    names: K[],
    asked: Partial<Record<K, unknown>>,
    got: Record<K, number>,
  ) => {
    for (const name of names) {
      if (asked[name] !== undefined && asked[name] !== got[name]) {
        out.push({ setting: `${group}.${name}`, requested: asked[name], applied: got[name] });
      }
    }
  };
  compare('codeMode', Object.keys(LIMIT_RULES) as (keyof Limits)[], requested.codeMode ?? {}, applied.codeMode);
  compare('shell', Object.keys(SHELL_RULES) as (keyof typeof SHELL_RULES)[], requested.shell ?? {}, applied.shell);
  return out;
}
