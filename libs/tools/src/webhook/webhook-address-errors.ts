import { ToolError } from '../errors';
import { describeAddressClass, type AddressClass } from './address-rules';

/** What refused an endpoint: its host, the address checked and that address's class. */
export interface EndpointRefusal {
  /** The endpoint's host as the URL normalizes it (`127.0.0.1` for `http://2130706433/`). */
  readonly host: string;
  readonly address: string;
  readonly addressClass: AddressClass;
}

/** `resolves to a loopback address (127.0.0.1)` or `is a link-local address (169.254.169.254)`. */
export function refusalReason(refusal: EndpointRefusal): string {
  const verb = refusal.host === refusal.address ? 'is' : 'resolves to';
  return `${verb} ${describeAddressClass(refusal.addressClass)} (${refusal.address})`;
}

/**
 * Thrown when a client tool endpoint's host is, or resolves to, an address client tools may not
 * reach (SPEC §10): at registration, or at connect time against the address about to be dialed.
 * The default message names the host; the webhook caller replaces it with one that names only
 * the tool and the address, since guest-visible messages never carry the endpoint.
 */
export class WebhookAddressRefusedError extends ToolError {
  readonly code = 'webhook_address_refused';
  constructor(
    readonly refusal: EndpointRefusal,
    message = `endpoint host ${refusal.host} ${refusalReason(refusal)}, which client tools may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.`,
  ) {
    super(message);
  }
}

/** Thrown when a `CODEMODE_WEBHOOK_ALLOW` entry is neither a host name, an IP address nor a CIDR. */
export class WebhookAllowListError extends Error {
  readonly code = 'invalid_config';
  constructor(
    readonly entry: string,
    detail: string,
  ) {
    super(
      `CODEMODE_WEBHOOK_ALLOW entry ${JSON.stringify(entry)} ${detail}; use comma-separated host names, IP addresses or CIDRs (10.1.0.0/16).`,
    );
    this.name = 'WebhookAllowListError';
  }
}

/** Thrown when a resolver answers a host name with no address at all (`code` as `dns.lookup` has it). */
export class EndpointUnresolvedError extends Error {
  readonly code = 'ENOTFOUND';
  constructor(readonly host: string) {
    super(`endpoint host ${host} has no addresses`);
    this.name = 'EndpointUnresolvedError';
  }
}
