import { ConfigError } from './errors';
import { ceilingsFor, parseTenantsFile, quotasFor, readTenancySettings } from './tenancy-settings';

describe('tenancy settings (SPEC §10)', () => {
  it('gives every tenant the SPEC quotas in multi mode and only explicit ones in single mode', () => {
    const settings = readTenancySettings({ CODEMODE_TENANT_MAX_STREAMS: '2' });
    expect(quotasFor(settings, 'alpha', 'multi')).toEqual({
      maxInflight: 32,
      maxParkedRuns: 64,
      maxParkedBytes: 1_073_741_824,
      maxShellProcesses: 16,
      maxShellCalls: 32,
      maxStreams: 2,
      maxStoredBytes: 1_073_741_824,
      rate: 50,
      burst: 100,
    });
    const single = quotasFor(settings, 'default', 'single');
    expect(single.maxStreams).toBe(2);
    expect(single.maxInflight).toBe(Number.POSITIVE_INFINITY);
  });

  it('reads ceilings and per-tenant overrides from the tenants file', () => {
    const file = JSON.stringify({ alpha: { quotas: { maxInflight: 4 }, ceilings: { timeoutMs: 2000 } } });
    const settings = readTenancySettings(
      { CODEMODE_CEILING_MEMORY_LIMIT_BYTES: '16777216', CODEMODE_TENANTS_FILE: '/etc/t.json' },
      () => file,
    );
    expect(settings.ceilings).toEqual({ memoryLimitBytes: 16_777_216 });
    expect(quotasFor(settings, 'alpha', 'multi').maxInflight).toBe(4);
    expect(quotasFor(settings, 'beta', 'multi').maxInflight).toBe(32);
    expect(ceilingsFor(settings, 'alpha')).toEqual({ memoryLimitBytes: 16_777_216, timeoutMs: 2000 });
    expect(ceilingsFor(settings, 'beta')).toEqual({ memoryLimitBytes: 16_777_216 });
  });

  it('refuses a bad tenants file naming what is wrong', () => {
    expect(() => parseTenantsFile('{')).toThrow(ConfigError);
    expect(() => parseTenantsFile('{"a":{"quotas":{"maxInflights":1}}}')).toThrow(/unknown name "maxInflights"/);
    expect(() => parseTenantsFile('{"a":{"ceilings":{"timeoutMs":0}}}')).toThrow(/timeoutMs must be an integer from 100 to 60000/);
    expect(() =>
      readTenancySettings({ CODEMODE_TENANTS_FILE: '/nope.json' }, () => {
        throw new Error('ENOENT');
      }),
    ).toThrow(/^CODEMODE_TENANTS_FILE cannot be read/);
  });

  it('reads the webhook allow list and the session TTL', () => {
    const settings = readTenancySettings({ CODEMODE_WEBHOOK_ALLOW: ' 10.0.0.0/8, hooks.internal ,', CODEMODE_SESSION_TTL_SECONDS: '3600' });
    expect(settings.webhookAllow).toEqual(['10.0.0.0/8', 'hooks.internal']);
    expect(settings.sessionTtlSeconds).toBe(3600);
    expect(readTenancySettings({}).sessionTtlSeconds).toBe(2_592_000);
    expect(readTenancySettings({ CODEMODE_WEBHOOK_ALLOW: '::1,fd00::/8,[::1],127.0.0.1/32,hooks.example.' }).webhookAllow).toHaveLength(5);
    for (const bad of ['10.0.0.0/33', 'http://x', 'a b', 'host/8', '1.2.3.4/8/1']) {
      expect(() => readTenancySettings({ CODEMODE_WEBHOOK_ALLOW: bad })).toThrow(
        /^CODEMODE_WEBHOOK_ALLOW has an entry that is not a host name, IP or CIDR/,
      );
    }
  });
});
