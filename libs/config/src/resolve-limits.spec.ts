import { LIMIT_RULES } from './limit-rules';
import { effectiveLimits, effectiveShellConfig, limitOverrides, resolveLimits, resolveShellConfig, shellOverrides } from './resolve-limits';
import { loadConfig } from './app-config';
import { ConfigError } from './errors';
import { readTenancySettings } from './tenancy-settings';

const defaults = loadConfig({}).limitDefaults;

describe('resolveLimits', () => {
  it('gives the SPEC §8 defaults for an empty input', () => {
    expect(resolveLimits({}, defaults)).toEqual({
      timeoutMs: 10000,
      memoryLimitBytes: 67108864,
      maxOutputBytes: 65536,
      maxSnapshotBytes: 10485760,
      maxPendingToolCalls: 16,
      snapshotTtlSeconds: 900,
      searchDefaultLimit: 8,
      maxSearchLimit: 50,
      resultsTtlSeconds: 3600,
    });
  });

  it.each([
    ['timeoutMs', 1, 100],
    ['timeoutMs', 10 ** 9, 60000],
    ['memoryLimitBytes', 5, 1048576],
    ['memoryLimitBytes', 2 ** 40, 1073741824],
    ['maxOutputBytes', 10, 1024],
    ['maxOutputBytes', 10 ** 9, 10485760],
    ['maxSnapshotBytes', 1, 1024],
    ['maxSnapshotBytes', 2 ** 40, 268435456],
    ['maxPendingToolCalls', 1000, 128],
    ['snapshotTtlSeconds', 10 ** 7, 86400],
    ['maxSearchLimit', 99, 50],
    ['resultsTtlSeconds', 1, 60],
    ['resultsTtlSeconds', 10 ** 6, 86400],
  ] as const)('clamps %s=%d to %d', (name, value, expected) => {
    expect(resolveLimits({ [name]: value }, defaults)[name]).toBe(expected);
  });

  it.each([0, -5, 1.5, '5000', null, true, Number.NaN, Infinity, 2 ** 60])('falls back to the default for %p', (value) => {
    expect(resolveLimits({ timeoutMs: value }, defaults).timeoutMs).toBe(10000);
  });

  it('clamps searchDefaultLimit to the resolved maxSearchLimit', () => {
    expect(resolveLimits({ searchDefaultLimit: 40, maxSearchLimit: 10 }, defaults)).toMatchObject({
      searchDefaultLimit: 10,
      maxSearchLimit: 10,
    });
  });

  it('keeps only valid overrides, clamped', () => {
    expect(limitOverrides({ timeoutMs: 50, maxOutputBytes: 'x', snapshotTtlSeconds: 2 })).toEqual({
      timeoutMs: 100,
      snapshotTtlSeconds: 2,
    });
  });
});

describe('ceilings (SPEC §10)', () => {
  const MiB = 1_048_576;

  it('clamps a session value to min(rule maximum, ceiling)', () => {
    const limits = resolveLimits({ memoryLimitBytes: 1024 * MiB, maxSnapshotBytes: 2 ** 40, timeoutMs: 50_000 }, defaults, {
      memoryLimitBytes: 16 * MiB,
      maxSnapshotBytes: 4 * MiB,
    });
    expect(limits).toMatchObject({ memoryLimitBytes: 16 * MiB, maxSnapshotBytes: 4 * MiB, timeoutMs: 50_000 });
  });

  it('leaves values under the ceiling and the rule minimum alone', () => {
    expect(
      resolveLimits({ memoryLimitBytes: 8 * MiB, timeoutMs: 1 }, defaults, { memoryLimitBytes: 16 * MiB, timeoutMs: 2000 }),
    ).toMatchObject({
      memoryLimitBytes: 8 * MiB,
      timeoutMs: 100,
    });
  });

  it('clamps a deployment default over its ceiling, and an invalid session value falls back to it clamped', () => {
    const config = loadConfig({ CODEMODE_MEMORY_LIMIT_BYTES: String(512 * MiB), CODEMODE_CEILING_MEMORY_LIMIT_BYTES: String(16 * MiB) });
    expect(config.limitDefaults.memoryLimitBytes).toBe(512 * MiB);
    expect(effectiveLimits(config, 'alpha', undefined).memoryLimitBytes).toBe(16 * MiB);
    expect(effectiveLimits(config, 'alpha', { memoryLimitBytes: 'lots' }).memoryLimitBytes).toBe(16 * MiB);
  });

  it('keeps searchDefaultLimit within both its own ceiling and the resolved maxSearchLimit', () => {
    expect(resolveLimits({ searchDefaultLimit: 40, maxSearchLimit: 50 }, defaults, { maxSearchLimit: 20 })).toMatchObject({
      searchDefaultLimit: 20,
      maxSearchLimit: 20,
    });
    expect(resolveLimits({ searchDefaultLimit: 40 }, defaults, { searchDefaultLimit: 5 })).toMatchObject({
      searchDefaultLimit: 5,
      maxSearchLimit: 50,
    });
    expect(resolveLimits({}, { ...defaults, searchDefaultLimit: 30 }, { maxSearchLimit: 10 }).searchDefaultLimit).toBe(10);
  });

  it("uses the tenant's ceilings: the tenants file replaces the deployment ceiling per name", () => {
    const env = {
      CODEMODE_CEILING_MEMORY_LIMIT_BYTES: String(16 * MiB),
      CODEMODE_CEILING_SNAPSHOT_TTL_SECONDS: '60',
      CODEMODE_TENANTS_FILE: '/etc/codemode/tenants.json',
    };
    const file = JSON.stringify({ beta: { ceilings: { memoryLimitBytes: 32 * MiB } } });
    const withTenants = { ...loadConfig({}), tenancySettings: readTenancySettings(env, () => file) };
    const asked = { memoryLimitBytes: 1024 * MiB, snapshotTtlSeconds: 86_400 };
    expect(effectiveLimits(withTenants, 'alpha', asked)).toMatchObject({ memoryLimitBytes: 16 * MiB, snapshotTtlSeconds: 60 });
    expect(effectiveLimits(withTenants, 'beta', asked)).toMatchObject({ memoryLimitBytes: 32 * MiB, snapshotTtlSeconds: 60 });
  });

  it('caps memoryLimitBytes at 256 MiB by default in multi-tenant mode; a deployment or tenant ceiling replaces that default', () => {
    const keyed = loadConfig({ CODEMODE_API_KEYS: 'k1:alpha' });
    expect(effectiveLimits(keyed, 'alpha', { memoryLimitBytes: 1024 * MiB }).memoryLimitBytes).toBe(256 * MiB);
    expect(effectiveLimits(loadConfig({ CODEMODE_TENANCY: 'multi' }), 'alpha', { memoryLimitBytes: 2 ** 40 }).memoryLimitBytes).toBe(
      256 * MiB,
    );
    const raised = loadConfig({ CODEMODE_API_KEYS: 'k1:alpha', CODEMODE_CEILING_MEMORY_LIMIT_BYTES: String(512 * MiB) });
    expect(effectiveLimits(raised, 'alpha', { memoryLimitBytes: 1024 * MiB }).memoryLimitBytes).toBe(512 * MiB);
    const file = JSON.stringify({ beta: { ceilings: { memoryLimitBytes: 768 * MiB } } });
    const withTenants = { ...keyed, tenancySettings: readTenancySettings({ CODEMODE_TENANTS_FILE: '/t.json' }, () => file) };
    expect(effectiveLimits(withTenants, 'beta', { memoryLimitBytes: 1024 * MiB }).memoryLimitBytes).toBe(768 * MiB);
    expect(effectiveLimits(withTenants, 'alpha', { memoryLimitBytes: 1024 * MiB }).memoryLimitBytes).toBe(256 * MiB);
  });

  it('is the rule maximum without any ceiling', () => {
    expect(effectiveLimits(loadConfig({}), 'alpha', { memoryLimitBytes: 2 ** 40 }).memoryLimitBytes).toBe(1_073_741_824);
  });

  it('caps the shell timeoutSeconds by CODEMODE_SHELL_MAX_TIMEOUT_SECONDS, keeping 0 (= the cap)', () => {
    const config = loadConfig({ CODEMODE_SHELL_MAX_TIMEOUT_SECONDS: '30' });
    expect(effectiveShellConfig(config, undefined).timeoutSeconds).toBe(30);
    expect(effectiveShellConfig(config, { timeoutSeconds: 3600 }).timeoutSeconds).toBe(30);
    expect(effectiveShellConfig(config, { timeoutSeconds: 10 }).timeoutSeconds).toBe(10);
    expect(effectiveShellConfig(config, { timeoutSeconds: 0 }).timeoutSeconds).toBe(0);
    expect(effectiveShellConfig(loadConfig({}), undefined).timeoutSeconds).toBe(1800);
  });
});

describe('loadConfig', () => {
  it('takes deployment defaults from CODEMODE_ variables, clamped', () => {
    const config = loadConfig({ CODEMODE_TIMEOUT_MS: '5000', CODEMODE_MAX_OUTPUT_BYTES: '1' });
    expect(config.limitDefaults.timeoutMs).toBe(5000);
    expect(config.limitDefaults.maxOutputBytes).toBe(1024);
    expect(resolveLimits({}, config.limitDefaults).timeoutMs).toBe(5000);
  });

  it('fails fast naming the variable', () => {
    expect(() => loadConfig({ CODEMODE_TIMEOUT_MS: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ CODEMODE_TIMEOUT_MS: 'soon' })).toThrow(/^CODEMODE_TIMEOUT_MS must be a positive integer/);
    expect(() => loadConfig({ CODEMODE_API_KEYS: 'nocolon' })).toThrow(/^CODEMODE_API_KEYS/);
  });

  it('listens on loopback only when authentication is off', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ CODEMODE_API_KEYS: 'k1:acme' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ CODEMODE_API_KEYS: 'k1:acme,k2:beta' }).apiKeys).toEqual(
      new Map([
        ['k1', 'acme'],
        ['k2', 'beta'],
      ]),
    );
  });

  it('names every limit variable of SPEC §9', () => {
    expect(Object.values(LIMIT_RULES).map((rule) => rule.env)).toEqual([
      'CODEMODE_TIMEOUT_MS',
      'CODEMODE_MEMORY_LIMIT_BYTES',
      'CODEMODE_MAX_OUTPUT_BYTES',
      'CODEMODE_MAX_SNAPSHOT_BYTES',
      'CODEMODE_MAX_PENDING_TOOL_CALLS',
      'CODEMODE_SNAPSHOT_TTL_SECONDS',
      'CODEMODE_SEARCH_DEFAULT_LIMIT',
      'CODEMODE_MAX_SEARCH_LIMIT',
      'CODEMODE_RESULTS_TTL_SECONDS',
    ]);
  });

  it('resolves shell defaults with zero allowed for timeoutSeconds', () => {
    const shell = loadConfig({}).shellDefaults;
    expect(shell).toEqual({
      backgroundMs: 10000,
      timeoutSeconds: 1800,
      cleanupMs: 1800000,
      maxOutputChars: 200000,
      pendingMaxOutputChars: 30000,
      inputWaitIdleMs: 15000,
      notifyOnExit: true,
      notifyOnExitEmptySuccess: false,
    });
    expect(resolveShellConfig({ timeoutSeconds: 0, backgroundMs: 1 }, shell)).toMatchObject({ timeoutSeconds: 0, backgroundMs: 10 });
  });

  it('takes the exit-notification switches only as booleans; anything else is the default', () => {
    const shell = loadConfig({}).shellDefaults;
    expect(resolveShellConfig({ notifyOnExit: false, notifyOnExitEmptySuccess: true }, shell)).toMatchObject({
      notifyOnExit: false,
      notifyOnExitEmptySuccess: true,
    });
    expect(resolveShellConfig({ notifyOnExit: 0, notifyOnExitEmptySuccess: 'true' }, shell)).toMatchObject({
      notifyOnExit: true,
      notifyOnExitEmptySuccess: false,
    });
    expect(shellOverrides({ notifyOnExit: false, notifyOnExitEmptySuccess: 1, backgroundMs: 50 })).toEqual({
      notifyOnExit: false,
      backgroundMs: 50,
    });
  });
});
