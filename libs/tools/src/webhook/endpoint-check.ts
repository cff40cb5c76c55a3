import type { ClientTool } from '@codemode/contracts';
import { systemResolver, type HostResolver, type WebhookAddressPolicy } from './address-policy';
import { WebhookAddressRefusedError, type EndpointRefusal } from './webhook-address-errors';

/** How long registration waits for a host to resolve before leaving it to the connect-time check. */
export const REGISTRATION_RESOLVE_TIMEOUT_MS = 5000;

/** The first client tool whose endpoint may not be reached, with its index in the registration. */
export interface RefusedClientTool extends RefusedEndpoint {
  readonly index: number;
  readonly tool: Pick<ClientTool, 'name' | 'endpoint'>;
}

class ResolveTimeoutError extends Error {
  readonly code = 'ETIMEOUT';
  constructor(host: string) {
    super(`resolving ${host} took longer than ${REGISTRATION_RESOLVE_TIMEOUT_MS} ms`);
    this.name = 'ResolveTimeoutError';
  }
}

/** Each host resolved once per registration, bounded in time. */
function registrationResolver(resolve: HostResolver): HostResolver {
  const answers = new Map<string, ReturnType<HostResolver>>();
  return (host) => {
    let answer = answers.get(host);
    if (!answer) {
      answer = new Promise((fulfil, reject) => {
        const timer = setTimeout(() => reject(new ResolveTimeoutError(host)), REGISTRATION_RESOLVE_TIMEOUT_MS);
        resolve(host)
          .then(fulfil, reject)
          .finally(() => clearTimeout(timer))
          .catch(() => undefined);
      });
      answers.set(host, answer);
    }
    return answer;
  };
}

/** Why an endpoint may not be stored: its origin and what refused it. */
export interface RefusedEndpoint {
  /** `http://host:port` of the endpoint, as the URL normalizes it (no path, query or credentials). */
  readonly origin: string;
  readonly refusal: EndpointRefusal;
}

/**
 * The registration-time check of SPEC §10 for one webhook address (a client tool's endpoint, a
 * session's `notifyUrl`): its host, and every address a host name resolves to, against the
 * address rules. A name that does not resolve now (or not within `REGISTRATION_RESOLVE_TIMEOUT_MS`)
 * is accepted: each call resolves and checks it again before dialing, so nothing is reached unchecked.
 * @returns what refused it, or undefined when it may be stored.
 */
export async function findRefusedUrl(
  endpoint: string,
  policy: WebhookAddressPolicy,
  resolve: HostResolver = systemResolver,
): Promise<RefusedEndpoint | undefined> {
  const url = new URL(endpoint);
  try {
    await policy.resolveEndpoint(url, registrationResolver(resolve));
    return undefined;
  } catch (error) {
    if (error instanceof WebhookAddressRefusedError) return { origin: `${url.protocol}//${url.host}`, refusal: error.refusal };
    return undefined;
  }
}

/**
 * `findRefusedUrl` for every endpoint of a client tool registration, each host resolved once.
 * @returns the first refused tool in registration order, or undefined when all may be stored.
 */
export async function findRefusedEndpoint(
  tools: readonly Pick<ClientTool, 'name' | 'endpoint'>[],
  policy: WebhookAddressPolicy,
  resolve: HostResolver = systemResolver,
): Promise<RefusedClientTool | undefined> {
  const lookup = registrationResolver(resolve);
  const outcomes = await Promise.all(
    tools.map(async (tool, index): Promise<RefusedClientTool | undefined> => {
      if (!tool.endpoint) return undefined;
      const refused = await findRefusedUrl(tool.endpoint, policy, lookup);
      return refused && { index, tool, ...refused };
    }),
  );
  return outcomes.find((outcome) => outcome !== undefined);
}
