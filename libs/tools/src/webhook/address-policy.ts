import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { bareAddress, canonicalAddress, classifyAddress, type AddressClass } from './address-rules';
import { EndpointUnresolvedError, WebhookAddressRefusedError, WebhookAllowListError } from './webhook-address-errors';

/** The deployment's tenancy mode, as far as webhook addresses care (SPEC §10 "Mode"). */
export type WebhookTenancyMode = 'multi' | 'single';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has (the system resolver: DNS and the hosts file). */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** Host names compare lowercase and without the root's trailing dot (`LocalHost.` is `localhost`). */
function hostKey(host: string): string {
  return host.toLowerCase().replace(/\.$/u, '');
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/u;

/**
 * `CODEMODE_WEBHOOK_ALLOW`: host names (exact match), IP addresses and CIDRs an endpoint may
 * reach in spite of the address rules. IPv4-mapped IPv6 addresses match their IPv4 entries.
 */
export class WebhookAllowList {
  private readonly hosts = new Set<string>();
  private readonly addresses = new BlockList();

  /** @throws WebhookAllowListError naming the first entry that is not a host, IP or CIDR. */
  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const entry = raw.trim();
      if (entry === '') continue;
      const slash = entry.indexOf('/');
      const ip = slash === -1 ? canonicalAddress(entry) : undefined;
      if (slash !== -1) {
        const network = bareAddress(entry.slice(0, slash));
        const version = isIP(network);
        const bits = entry.slice(slash + 1);
        if (version === 0 || !/^\d{1,3}$/u.test(bits) || Number(bits) > (version === 4 ? 32 : 128)) {
          throw new WebhookAllowListError(entry, 'is not a valid CIDR');
        }
        this.addresses.addSubnet(network, Number(bits), version === 4 ? 'ipv4' : 'ipv6');
      } else if (ip) {
        this.addresses.addAddress(ip.address, ip.family);
      } else if (HOST_NAME.test(hostKey(entry))) {
        this.hosts.add(hostKey(entry));
      } else {
        throw new WebhookAllowListError(entry, 'is not a host name, IP address or CIDR');
      }
    }
  }

  allowsHost(host: string): boolean {
    return this.hosts.has(hostKey(bareAddress(host)));
  }

  allowsAddress(address: string): boolean {
    const ip = canonicalAddress(address);
    return ip !== undefined && this.addresses.check(ip.address, ip.family);
  }
}

/** What `resolveEndpoint` found: the host as the URL names it and every address to dial. */
export interface ResolvedEndpoint {
  readonly host: string;
  readonly addresses: readonly ResolvedAddress[];
}

/**
 * The address rules of SPEC §10 for one tenancy mode: loopback, private, link-local, CGNAT,
 * unspecified, multicast, broadcast and reserved addresses are refused unless allow-listed; in
 * `single` mode (development) loopback is allowed.
 */
export class WebhookAddressPolicy {
  constructor(
    readonly allow: WebhookAllowList,
    readonly mode: WebhookTenancyMode,
  ) {}

  /** Why `address` may not be dialed, or null when it may. */
  refusal(address: string): AddressClass | null {
    if (this.allow.allowsAddress(address)) return null;
    const addressClass = classifyAddress(address);
    return addressClass === 'loopback' && this.mode === 'single' ? null : addressClass;
  }

  /**
   * Resolves the endpoint's host once (an IP literal is itself) and checks every address it has;
   * the caller dials only these addresses (see pinnedLookup), so a DNS answer that changes after
   * the check is never used. A host on the allow list is not checked.
   * @throws WebhookAddressRefusedError naming the first refused address; the resolver's error
   * (e.g. ENOTFOUND) when the name does not resolve.
   */
  async resolveEndpoint(endpoint: URL | string, resolve: HostResolver = systemResolver): Promise<ResolvedEndpoint> {
    const host = bareAddress((typeof endpoint === 'string' ? new URL(endpoint) : endpoint).hostname);
    const version = isIP(host);
    const addresses: readonly ResolvedAddress[] = version === 0 ? await resolve(host) : [{ address: host, family: version === 6 ? 6 : 4 }];
    if (addresses.length === 0) throw new EndpointUnresolvedError(host);
    if (!this.allow.allowsHost(host)) {
      for (const { address } of addresses) {
        const addressClass = this.refusal(address);
        if (addressClass) throw new WebhookAddressRefusedError({ host, address, addressClass });
      }
    }
    return { host, addresses };
  }
}
