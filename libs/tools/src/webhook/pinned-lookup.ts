import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './address-policy';
import { EndpointUnresolvedError } from './webhook-address-errors';

/**
 * A `lookup` for `http.request`/`net.connect` that answers only with addresses already checked,
 * whatever name it is asked for, so the socket dials exactly what the address rules approved
 * and a DNS answer that changed since (rebinding) is never consulted. The request keeps its
 * host name, so the `Host` header, TLS SNI and certificate check still use the endpoint's name.
 */
export function pinnedLookup(checked: readonly ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    const usable: LookupAddress[] = checked
      .filter((entry) => wanted === 0 || entry.family === wanted)
      .map(({ address, family }) => ({ address, family }));
    if (usable.length === 0) {
      callback(new EndpointUnresolvedError(hostname), '');
    } else if (options.all) {
      callback(null, usable);
    } else {
      callback(null, usable[0].address, usable[0].family);
    }
  };
}
