import { clampedSettings } from './clamped-settings';
import { resolveLimits, resolveShellConfig } from './resolve-limits';
import { LIMIT_RULES, SHELL_RULES } from './limit-rules';
import type { Limits, ShellConfig } from '@codemode/contracts';

const limitDefaults = Object.fromEntries(Object.entries(LIMIT_RULES).map(([name, rule]) => [name, rule.defaultValue])) as Limits;
const shellDefaults = {
  ...Object.fromEntries(Object.entries(SHELL_RULES).map(([name, rule]) => [name, rule.defaultValue])),
  notifyOnExit: true,
  notifyOnExitEmptySuccess: false,
} as ShellConfig;

describe('clampedSettings', () => {
  it('names each setting asked for that is clamped, capped by a ceiling, or falls back to its default, with the value applied', () => {
    const codeMode = { timeoutMs: 999_999, memoryLimitBytes: 5, maxPendingToolCalls: 0, maxOutputBytes: 2048, snapshotTtlSeconds: 900 };
    const shell = { cleanupMs: 1, backgroundMs: 20_000 };
    const applied = {
      codeMode: resolveLimits(codeMode, limitDefaults, { maxOutputBytes: 1024 }),
      shell: resolveShellConfig(shell, shellDefaults),
    };
    expect(clampedSettings({ codeMode, shell }, applied)).toEqual([
      { setting: 'codeMode.timeoutMs', requested: 999_999, applied: 60_000 },
      { setting: 'codeMode.memoryLimitBytes', requested: 5, applied: 1_048_576 },
      { setting: 'codeMode.maxOutputBytes', requested: 2048, applied: 1024 },
      { setting: 'codeMode.maxPendingToolCalls', requested: 0, applied: 16 },
      { setting: 'shell.cleanupMs', requested: 1, applied: 60_000 },
    ]);
  });

  it('says nothing when every setting asked for is applied as asked, or none was asked for', () => {
    const codeMode = { timeoutMs: 5000 };
    const applied = { codeMode: resolveLimits(codeMode, limitDefaults), shell: shellDefaults };
    expect(clampedSettings({ codeMode }, applied)).toEqual([]);
    expect(clampedSettings({}, { codeMode: resolveLimits({ timeoutMs: 1 }, limitDefaults), shell: shellDefaults })).toEqual([]);
  });
});
