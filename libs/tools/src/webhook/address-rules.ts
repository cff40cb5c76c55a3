import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses a webhook client tool may not reach (SPEC §10 "Webhooks and MCP"). Pure:
 * address text in, class out; no DNS, no configuration (see address-policy.ts for both).
 */

/** Why an address is refused; `null` from `classifyAddress` means a public unicast address. */
export type AddressClass = 'loopback' | 'private' | 'link-local' | 'cgnat' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

/** Ranges per class, most specific first within a family (the first match wins). */
const IPV4_RANGES: readonly (readonly [AddressClass, string, number])[] = [
  ['broadcast', '255.255.255.255', 32],
  ['unspecified', '0.0.0.0', 8],
  ['loopback', '127.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['link-local', '169.254.0.0', 16],
  ['cgnat', '100.64.0.0', 10],
  ['multicast', '224.0.0.0', 4],
  ['reserved', '240.0.0.0', 4],
  // IETF protocol assignments, documentation and benchmarking nets: never a real endpoint.
  ['reserved', '192.0.0.0', 24],
  ['reserved', '192.0.2.0', 24],
  ['reserved', '198.18.0.0', 15],
  ['reserved', '198.51.100.0', 24],
  ['reserved', '203.0.113.0', 24],
];

const IPV6_RANGES: readonly (readonly [AddressClass, string, number])[] = [
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  ['private', 'fc00::', 7],
  // Site-local (deprecated by RFC 3879) and local-use NAT64 (RFC 8215): local by definition.
  ['private', 'fec0::', 10],
  ['private', '64:ff9b:1::', 48],
  ['link-local', 'fe80::', 10],
  ['multicast', 'ff00::', 8],
  // Discard-only, benchmarking and documentation prefixes.
  ['reserved', '100::', 64],
  ['reserved', '2001:2::', 48],
  ['reserved', '2001:db8::', 32],
  ['reserved', '3fff::', 20],
];

function rangeLists(ranges: readonly (readonly [AddressClass, string, number])[], family: 'ipv4' | 'ipv6'): [AddressClass, BlockList][] {
  return ranges.map(([addressClass, network, prefix]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return [addressClass, list];
  });
}

const IPV4_LISTS = rangeLists(IPV4_RANGES, 'ipv4');
const IPV6_LISTS = rangeLists(IPV6_RANGES, 'ipv6');

/** Strips URL brackets (`[::1]`) and a zone id (`fe80::1%eth0`). */
export function bareAddress(host: string): string {
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const zone = unbracketed.indexOf('%');
  return zone === -1 ? unbracketed : unbracketed.slice(0, zone);
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const [a, b, c, d] = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const gap = text.indexOf('::');
  if (gap === -1) return parse(text);
  const left = parse(text.slice(0, gap));
  const right = parse(text.slice(gap + 2));
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function ipv4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address stands for, when dialing it reaches (or names) that IPv4
 * host: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, SIIT `::ffff:0:a.b.c.d`,
 * NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:AABB:CCDD::`.
 */
export function embeddedIpv4(address: string): string | undefined {
  const bare = bareAddress(address);
  if (isIP(bare) !== 6) return undefined;
  const g = ipv6Groups(bare);
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4Of(g[6], g[7]);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6], g[7]);
  if (zeros(0, 6) && (g[6] !== 0 || g[7] > 1)) return ipv4Of(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4Of(g[6], g[7]);
  if (g[0] === 0x2002) return ipv4Of(g[1], g[2]);
  return undefined;
}

/**
 * The address as the checks see it: an IPv4 address for IPv4 and IPv4-mapped IPv6 text
 * (`::ffff:7f00:1` → `127.0.0.1`), else the bare IPv6 address; undefined when not an IP.
 */
export function canonicalAddress(text: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const bare = bareAddress(text);
  const version = isIP(bare);
  if (version === 4) return { address: bare, family: 'ipv4' };
  if (version !== 6) return undefined;
  const g = ipv6Groups(bare);
  if (g.slice(0, 5).every((group) => group === 0) && g[5] === 0xffff) return { address: ipv4Of(g[6], g[7]), family: 'ipv4' };
  return { address: bare, family: 'ipv6' };
}

/**
 * The class of an IP address a client tool may not reach, or null for a public unicast address.
 * IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) take that address's
 * class; an IPv4-compatible address of a public host is still `reserved` (deprecated, never dialed).
 * @throws TypeError when `address` is not an IP address (host names must be resolved first).
 */
export function classifyAddress(address: string): AddressClass | null {
  const canonical = canonicalAddress(address);
  if (!canonical) throw new TypeError(`not an IP address: ${address}`);
  if (canonical.family === 'ipv4') return IPV4_LISTS.find(([, list]) => list.check(canonical.address, 'ipv4'))?.[0] ?? null;
  const own = IPV6_LISTS.find(([, list]) => list.check(canonical.address, 'ipv6'))?.[0];
  if (own) return own;
  const embedded = embeddedIpv4(canonical.address);
  if (embedded === undefined) return null;
  const inner = classifyAddress(embedded);
  const compatible = ipv6Groups(canonical.address)
    .slice(0, 6)
    .every((group) => group === 0);
  return inner ?? (compatible ? 'reserved' : null);
}

/** `a loopback address`, for messages. */
export function describeAddressClass(addressClass: AddressClass): string {
  switch (addressClass) {
    case 'cgnat':
      return 'a carrier-grade NAT (CGNAT) address';
    case 'unspecified':
      return 'an unspecified address';
    default:
      return `a ${addressClass} address`;
  }
}
