import { ConfigError } from './errors';
import { apiTenancy, readShellSandboxSettings, readTenancy } from './shell-sandbox-settings';

describe('shell sandbox settings (SPEC §10)', () => {
  it('defaults to auto with the SPEC caps', () => {
    expect(readShellSandboxSettings({})).toEqual({
      mode: 'auto',
      bwrapPath: '/usr/bin/bwrap',
      prlimitPath: '/usr/bin/prlimit',
      uidRange: { first: 200_000, last: 299_999 },
      maxProcesses: 256,
      memoryBytes: 1_073_741_824,
      maxFileBytes: 268_435_456,
      maxTimeoutSeconds: 3600,
      workspaceMaxBytes: 1_073_741_824,
      workspaceMaxFiles: 100_000,
    });
  });

  it('reads every variable and refuses bad ones naming the variable', () => {
    const read = readShellSandboxSettings({
      CODEMODE_SHELL_SANDBOX: 'bwrap',
      CODEMODE_SHELL_UID_RANGE: '10000-10999',
      CODEMODE_SHELL_MAX_TIMEOUT_SECONDS: '30',
      CODEMODE_WORKSPACE_MAX_FILES: '2000',
    });
    expect(read).toMatchObject({
      mode: 'bwrap',
      uidRange: { first: 10_000, last: 10_999 },
      maxTimeoutSeconds: 30,
      workspaceMaxFiles: 2000,
    });
    expect(() => readShellSandboxSettings({ CODEMODE_SHELL_SANDBOX: 'off' })).toThrow(
      new ConfigError('CODEMODE_SHELL_SANDBOX', 'must be one of auto, bwrap, none.'),
    );
    expect(() => readShellSandboxSettings({ CODEMODE_SHELL_UID_RANGE: '0-100' })).toThrow(/^CODEMODE_SHELL_UID_RANGE must be FIRST-LAST/);
    expect(() => readShellSandboxSettings({ CODEMODE_SHELL_MAX_PROCESSES: '0' })).toThrow(
      /^CODEMODE_SHELL_MAX_PROCESSES must be an integer/,
    );
  });

  it('derives the API mode from its keys unless CODEMODE_TENANCY says', () => {
    const keys = new Map([['k', 'alpha']]);
    expect(apiTenancy({ tenancy: null, apiKeys: keys })).toBe('multi');
    expect(apiTenancy({ tenancy: null, apiKeys: null })).toBe('single');
    expect(apiTenancy({ tenancy: 'multi', apiKeys: null })).toBe('multi');
    expect(readTenancy({})).toBeNull();
    expect(readTenancy({ CODEMODE_TENANCY: 'single' })).toBe('single');
    expect(() => readTenancy({ CODEMODE_TENANCY: 'many' })).toThrow(/^CODEMODE_TENANCY must be multi or single/);
  });
});
