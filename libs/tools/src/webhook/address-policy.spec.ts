import type { ClientTool } from '@codemode/contracts';
import { WebhookAddressPolicy, WebhookAllowList, type HostResolver, type ResolvedAddress } from './address-policy';
import { findRefusedEndpoint } from './endpoint-check';
import { EndpointUnresolvedError, WebhookAddressRefusedError, WebhookAllowListError } from './webhook-address-errors';

/** A resolver over a fixed table (no DNS): unknown names fail like getaddrinfo does. */
function fakeResolver(table: Record<string, string[]>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (host: string): Promise<ResolvedAddress[]> => {
    calls.push(host);
    const addresses = table[host];
    if (!addresses) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return Object.assign(resolve, { calls });
}

const multi = (allow: string[] = []) => new WebhookAddressPolicy(new WebhookAllowList(allow), 'multi');
const single = (allow: string[] = []) => new WebhookAddressPolicy(new WebhookAllowList(allow), 'single');

describe('WebhookAddressPolicy.refusal', () => {
  it('refuses every non-public class in multi mode', () => {
    for (const [address, expected] of [
      ['127.0.0.1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.0.0.5', 'private'],
      ['169.254.169.254', 'link-local'],
      ['100.64.0.1', 'cgnat'],
      ['0.0.0.0', 'unspecified'],
      ['8.8.8.8', null],
    ] as const) {
      expect(multi().refusal(address)).toBe(expected);
    }
  });

  it('allows loopback, and only loopback, in single mode', () => {
    expect(single().refusal('127.0.0.1')).toBeNull();
    expect(single().refusal('127.3.2.1')).toBeNull();
    expect(single().refusal('::1')).toBeNull();
    expect(single().refusal('::ffff:7f00:1')).toBeNull();
    expect(single().refusal('10.0.0.5')).toBe('private');
    expect(single().refusal('169.254.169.254')).toBe('link-local');
    expect(single().refusal('100.64.0.1')).toBe('cgnat');
    expect(single().refusal('0.0.0.0')).toBe('unspecified');
    expect(single().refusal('fd00::1')).toBe('private');
  });

  it('exempts allow-listed IPs and CIDRs, in either IPv4 spelling', () => {
    const policy = multi(['127.0.0.1', '10.1.0.0/16', 'fd00:1::/32', '[::1]']);
    expect(policy.refusal('127.0.0.1')).toBeNull();
    expect(policy.refusal('::ffff:127.0.0.1')).toBeNull();
    expect(policy.refusal('127.0.0.2')).toBe('loopback');
    expect(policy.refusal('10.1.255.7')).toBeNull();
    expect(policy.refusal('::ffff:10.1.2.3')).toBeNull();
    expect(policy.refusal('10.2.0.1')).toBe('private');
    expect(policy.refusal('fd00:1:ffff::9')).toBeNull();
    expect(policy.refusal('fd00:2::9')).toBe('private');
    expect(policy.refusal('::1')).toBeNull();
  });

  it('refuses allow entries that are not hosts, IPs or CIDRs', () => {
    expect(() => new WebhookAllowList(['10.0.0.0/33'])).toThrow(WebhookAllowListError);
    expect(() => new WebhookAllowList(['::1/129'])).toThrow('CODEMODE_WEBHOOK_ALLOW entry "::1/129" is not a valid CIDR');
    expect(() => new WebhookAllowList(['not a host'])).toThrow(WebhookAllowListError);
    expect(() => new WebhookAllowList(['http://x/'])).toThrow(WebhookAllowListError);
    expect(() => new WebhookAllowList(['', ' hooks.internal ', 'LOCALHOST.'])).not.toThrow();
  });
});

describe('WebhookAddressPolicy.resolveEndpoint', () => {
  const resolver = fakeResolver({
    localhost: ['127.0.0.1', '::1'],
    'hooks.example.com': ['93.184.215.14'],
    'mixed.example.com': ['93.184.215.14', '10.0.0.9'],
    'metadata.example.com': ['169.254.169.254'],
    'hooks.internal': ['10.20.0.4'],
  });

  it('checks a literal address without resolving it', async () => {
    resolver.calls.length = 0;
    await expect(multi().resolveEndpoint('http://127.0.0.1:6379/', resolver)).rejects.toMatchObject({
      code: 'webhook_address_refused',
      refusal: { host: '127.0.0.1', address: '127.0.0.1', addressClass: 'loopback' },
      message:
        'endpoint host 127.0.0.1 is a loopback address (127.0.0.1), which client tools may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.',
    });
    await expect(multi().resolveEndpoint('http://[::ffff:127.0.0.1]:3000/', resolver)).rejects.toMatchObject({
      refusal: { addressClass: 'loopback' },
    });
    await expect(multi().resolveEndpoint('http://2130706433/', resolver)).rejects.toMatchObject({ refusal: { host: '127.0.0.1' } });
    await expect(multi().resolveEndpoint('https://93.184.215.14/hook', resolver)).resolves.toEqual({
      host: '93.184.215.14',
      addresses: [{ address: '93.184.215.14', family: 4 }],
    });
    expect(resolver.calls).toEqual([]);
  });

  it('refuses a name when any of its addresses is refused', async () => {
    await expect(multi().resolveEndpoint('http://localhost:9464/metrics', resolver)).rejects.toMatchObject({
      refusal: { host: 'localhost', address: '127.0.0.1', addressClass: 'loopback' },
      message: expect.stringContaining('endpoint host localhost resolves to a loopback address (127.0.0.1)'),
    });
    await expect(multi().resolveEndpoint('http://mixed.example.com/', resolver)).rejects.toMatchObject({
      refusal: { address: '10.0.0.9', addressClass: 'private' },
    });
    await expect(multi().resolveEndpoint('http://metadata.example.com/', resolver)).rejects.toBeInstanceOf(WebhookAddressRefusedError);
    await expect(multi().resolveEndpoint('https://hooks.example.com/x', resolver)).resolves.toEqual({
      host: 'hooks.example.com',
      addresses: [{ address: '93.184.215.14', family: 4 }],
    });
  });

  it('lets an allow-listed host name through whatever it resolves to', async () => {
    await expect(
      multi(['hooks.internal']).resolveEndpoint('http://HOOKS.internal./x', fakeResolver({ 'hooks.internal.': ['10.20.0.4'] })),
    ).resolves.toMatchObject({
      addresses: [{ address: '10.20.0.4' }],
    });
    await expect(
      multi(['hooks.internal']).resolveEndpoint('http://other.internal/x', fakeResolver({ 'other.internal': ['10.20.0.4'] })),
    ).rejects.toMatchObject({
      refusal: { addressClass: 'private' },
    });
  });

  it('allows localhost in single mode (both of its addresses are loopback)', async () => {
    await expect(single().resolveEndpoint('http://localhost:3000/', resolver)).resolves.toMatchObject({ host: 'localhost' });
  });

  it('passes resolver failures through, and treats an empty answer as not found', async () => {
    await expect(multi().resolveEndpoint('http://nowhere.invalid/', resolver)).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(multi().resolveEndpoint('http://empty.example/', () => Promise.resolve([]))).rejects.toBeInstanceOf(
      EndpointUnresolvedError,
    );
  });
});

describe('findRefusedEndpoint (registration)', () => {
  const tool = (name: string, endpoint?: string): ClientTool => ({
    name,
    description: '',
    inputSchema: { type: 'object' },
    ...(endpoint ? { endpoint } : {}),
  });
  const resolver = fakeResolver({ localhost: ['127.0.0.1', '::1'], 'hooks.example.com': ['93.184.215.14'] });

  it('names the first refused tool in registration order, with its origin only', async () => {
    const refused = await findRefusedEndpoint(
      [
        tool('ask'),
        tool('ok', 'https://hooks.example.com/a'),
        tool('metrics', 'http://localhost:9464/metrics?token=s3cret'),
        tool('meta', 'http://169.254.169.254/latest/meta-data'),
      ],
      multi(),
      resolver,
    );
    expect(refused).toMatchObject({
      index: 2,
      tool: { name: 'metrics' },
      origin: 'http://localhost:9464',
      refusal: { addressClass: 'loopback' },
    });
  });

  it('accepts names that do not resolve now (they are checked when called) and resolves each host once', async () => {
    resolver.calls.length = 0;
    await expect(
      findRefusedEndpoint(
        [tool('a', 'http://nowhere.invalid/a'), tool('b', 'https://hooks.example.com/a'), tool('c', 'https://hooks.example.com/b')],
        multi(),
        resolver,
      ),
    ).resolves.toBeUndefined();
    expect(resolver.calls.sort()).toEqual(['hooks.example.com', 'nowhere.invalid']);
  });
});
