import { canonicalAddress, classifyAddress, embeddedIpv4, type AddressClass } from './address-rules';

/** The host the WHATWG URL parser leaves for `url`, brackets removed: what the checks classify. */
const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/gu, '');

describe('classifyAddress', () => {
  it.each<[string, AddressClass | null]>([
    // loopback
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    // RFC 1918 and RFC 4193 (and deprecated site-local)
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fec0::1', 'private'],
    // link-local, the cloud metadata address among them
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    // CGNAT
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    // unspecified
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    // multicast, broadcast, reserved
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    // public unicast
    ['8.8.8.8', null],
    ['1.1.1.1', null],
    ['172.32.0.1', null],
    ['100.128.0.1', null],
    ['169.253.255.255', null],
    ['2606:4700:4700::1111', null],
    ['2a00:1450:4001::200e', null],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each<[string, AddressClass | null]>([
    // IPv4-mapped, in both spellings
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['0:0:0:0:0:ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.5', 'private'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:100.64.0.1', 'cgnat'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:224.0.0.1', 'multicast'],
    ['::ffff:8.8.8.8', null],
    // IPv4-compatible (deprecated): the embedded class, else reserved
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::192.168.0.1', 'private'],
    ['::8.8.8.8', 'reserved'],
    // SIIT, NAT64 (well-known and local-use) and 6to4 forms
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::8.8.8.8', null],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0a00:0005::1', 'private'],
    ['2002:0808:0808::1', null],
  ])('the IPv6 form %s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each<[string, string, AddressClass]>([
    ['http://2130706433/', '127.0.0.1', 'loopback'],
    ['http://0x7f.1/', '127.0.0.1', 'loopback'],
    ['http://127.1/', '127.0.0.1', 'loopback'],
    ['http://0x7f000001/', '127.0.0.1', 'loopback'],
    ['http://017700000001/', '127.0.0.1', 'loopback'],
    ['http://127.0.0.1./', '127.0.0.1', 'loopback'],
    ['http://0/', '0.0.0.0', 'unspecified'],
    ['http://0xa9fea9fe/', '169.254.169.254', 'link-local'],
    ['http://10.1/', '10.0.0.1', 'private'],
    ['http://[::ffff:127.0.0.1]:3000/', '::ffff:7f00:1', 'loopback'],
    ['http://[::127.0.0.1]/', '::7f00:1', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/', '::1', 'loopback'],
  ])('odd spelling %s normalizes to %s (%s)', (url, host, expected) => {
    expect(hostOf(url)).toBe(host);
    expect(classifyAddress(hostOf(url))).toBe(expected);
  });

  it('refuses to classify a host name', () => {
    expect(() => classifyAddress('localhost')).toThrow(TypeError);
  });
});

describe('canonicalAddress and embeddedIpv4', () => {
  it('maps IPv4-mapped IPv6 to IPv4 and leaves other addresses alone', () => {
    expect(canonicalAddress('::ffff:7f00:1')).toEqual({ address: '127.0.0.1', family: 'ipv4' });
    expect(canonicalAddress('[::1]')).toEqual({ address: '::1', family: 'ipv6' });
    expect(canonicalAddress('10.0.0.1')).toEqual({ address: '10.0.0.1', family: 'ipv4' });
    expect(canonicalAddress('example.com')).toBeUndefined();
  });

  it('finds the IPv4 address inside NAT64 and 6to4 addresses only', () => {
    expect(embeddedIpv4('64:ff9b::a00:5')).toBe('10.0.0.5');
    expect(embeddedIpv4('2002:c0a8:101::')).toBe('192.168.1.1');
    expect(embeddedIpv4('2606:4700::1111')).toBeUndefined();
    expect(embeddedIpv4('::1')).toBeUndefined();
  });
});
