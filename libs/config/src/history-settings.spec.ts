import { loadConfig } from './app-config';
import { ConfigError } from './errors';
import { readHistorySettings, SPEC_DEFAULT_HISTORY } from './history-settings';

describe('history settings', () => {
  it('default to 24 h retention and 10 000 events or 16 MiB per run (SPEC §6)', () => {
    const expected = { retentionSeconds: 86_400, runHistoryMaxEvents: 10_000, runHistoryMaxBytes: 16_777_216 };
    expect(SPEC_DEFAULT_HISTORY).toEqual(expected);
    expect(loadConfig({}).history).toEqual(expected);
    expect(readHistorySettings({ CODEMODE_RETENTION_SECONDS: ' ', CODEMODE_RUN_HISTORY_MAX_EVENTS: '' })).toEqual(expected);
  });

  it('reads each variable', () => {
    const env = {
      CODEMODE_RETENTION_SECONDS: '10800',
      CODEMODE_RUN_HISTORY_MAX_EVENTS: '500',
      CODEMODE_RUN_HISTORY_MAX_BYTES: '2097152',
    };
    expect(loadConfig(env).history).toEqual({ retentionSeconds: 10_800, runHistoryMaxEvents: 500, runHistoryMaxBytes: 2_097_152 });
  });

  it.each([
    ['CODEMODE_RETENTION_SECONDS', '3600', 'must be an integer from 10800 to 31536000, got "3600".'],
    ['CODEMODE_RETENTION_SECONDS', '10800.5', 'must be an integer from 10800 to 31536000, got "10800.5".'],
    ['CODEMODE_RETENTION_SECONDS', '99999999999', 'must be an integer from 10800 to 31536000, got "99999999999".'],
    ['CODEMODE_RUN_HISTORY_MAX_EVENTS', 'ten', 'must be an integer from 100 to 1000000, got "ten".'],
    ['CODEMODE_RUN_HISTORY_MAX_EVENTS', '0', 'must be an integer from 100 to 1000000, got "0".'],
    ['CODEMODE_RUN_HISTORY_MAX_BYTES', '-1', 'must be an integer from 1048576 to 1073741824, got "-1".'],
    ['CODEMODE_RUN_HISTORY_MAX_BYTES', '16MiB', 'must be an integer from 1048576 to 1073741824, got "16MiB".'],
  ])('rejects %s=%s at boot, naming the variable', (name, value, problem) => {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect(caught).toMatchObject({ variable: name, message: `${name} ${problem}` });
  });
});

describe('compact finished runs (CODEMODE_COMPACT_RUNS)', () => {
  it('is on by default, off with 0, and refuses other values at boot', () => {
    expect(loadConfig({}).compactRuns).toBe(true);
    expect(loadConfig({ CODEMODE_COMPACT_RUNS: ' ' }).compactRuns).toBe(true);
    expect(loadConfig({ CODEMODE_COMPACT_RUNS: '0' }).compactRuns).toBe(false);
    expect(loadConfig({ CODEMODE_COMPACT_RUNS: '1' }).compactRuns).toBe(true);
    expect(() => loadConfig({ CODEMODE_COMPACT_RUNS: 'yes' })).toThrow('must be 1 or 0, got "yes".');
  });
});
