import { setTimeout as sleep } from 'node:timers/promises';
import { systemResolver, type HostResolver, type WebhookAddressPolicy } from '../webhook/address-policy';
import { pinnedLookup } from '../webhook/pinned-lookup';
import { signedJsonHeaders } from '../webhook/signature';
import { refusalReason, WebhookAddressRefusedError } from '../webhook/webhook-address-errors';
import { postBounded } from '../webhook/webhook-request';

/** Tries in all, the first included (SPEC §7: "retried with backoff up to 5 times"). */
export const NOTIFICATION_MAX_ATTEMPTS = 5;
/** How long one try waits for the answer. */
export const NOTIFICATION_TIMEOUT_MS = 10_000;
/** The wait before the second try; each later one waits twice as long, up to the cap. */
export const NOTIFICATION_BACKOFF_BASE_MS = 500;
export const NOTIFICATION_BACKOFF_MAX_MS = 8_000;
/** The receiver's answer is not read: a small bound is plenty. */
const ANSWER_LIMIT_BYTES = 64 * 1024;

/** How one try ended: an HTTP status, or no answer at all (`error` says why, never the URL). */
export type NotificationTry = { readonly httpStatus: number } | { readonly error: string };

/** How the delivery ended, as `shell.notified` records it. */
export interface NotificationOutcome {
  readonly status: 'delivered' | 'failed';
  /** Tries made; 0 when the address was refused before anything was sent. */
  readonly attempts: number;
  readonly httpStatus?: number;
  readonly error?: string;
}

/** Whether a try is worth repeating: no answer (network error, timeout), a 5xx or a 429; not a 2xx, 3xx or other 4xx. */
export function shouldRetry(attempt: NotificationTry): boolean {
  if ('error' in attempt) return true;
  return attempt.httpStatus >= 500 || attempt.httpStatus === 429;
}

/**
 * The wait before try `attempt + 1`: 500 ms doubled per try, capped at 8 s, ±20 % jitter so that
 * many receivers failing at once are not retried in lockstep.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(NOTIFICATION_BACKOFF_BASE_MS * 2 ** (attempt - 1), NOTIFICATION_BACKOFF_MAX_MS);
  return Math.round(base * (0.8 + 0.4 * random()));
}

export interface NotificationDelivery {
  readonly url: string;
  /** The JSON body; the same bytes are sent on every try. */
  readonly body: unknown;
  /** Checked against the address each try dials (SPEC §10). */
  readonly addressPolicy: WebhookAddressPolicy;
  /** The tenant's webhook secret; without one no signature header is sent, as for tool webhooks. */
  readonly secret: string | undefined;
  /** Ends the delivery early (the worker is stopping). */
  readonly signal?: AbortSignal;
  readonly resolve?: HostResolver;
  /** @default 10000 */
  readonly timeoutMs?: number;
  /** Waits between tries; tests pass a shorter one. @default backoffMs */
  readonly backoff?: (attempt: number) => number;
  /** Clock in ms, for the signature timestamp. @default Date.now */
  readonly now?: () => number;
}

/**
 * POSTs a notification signed as client tool webhooks are (`x-codemode-timestamp`,
 * `x-codemode-signature` over `<timestamp>.<body>`, signed afresh per try so a late retry is not
 * stale), up to NOTIFICATION_MAX_ATTEMPTS tries while `shouldRetry` says so. Every try resolves
 * the host again and dials only the addresses the policy allowed (DNS rebinding cannot swap
 * them); a refused address ends the delivery at once. Redirects are not followed. Never throws.
 */
export async function deliverNotification(delivery: NotificationDelivery): Promise<NotificationOutcome> {
  const payload = JSON.stringify(delivery.body);
  const url = new URL(delivery.url);
  const backoff = delivery.backoff ?? ((attempt: number) => backoffMs(attempt));
  let last: NotificationTry = { error: 'not sent' };
  for (let attempt = 1; attempt <= NOTIFICATION_MAX_ATTEMPTS; attempt += 1) {
    if (delivery.signal?.aborted) return failedOutcome(attempt - 1, last, 'the worker stopped before it was delivered');
    try {
      last = await tryOnce(url, payload, delivery);
    } catch (error) {
      if (error instanceof WebhookAddressRefusedError) {
        return {
          status: 'failed',
          attempts: attempt - 1,
          error: `its host ${refusalReason(error.refusal)}, which webhooks may not reach`,
        };
      }
      throw error;
    }
    if ('httpStatus' in last && last.httpStatus >= 200 && last.httpStatus <= 299) {
      return { status: 'delivered', attempts: attempt, httpStatus: last.httpStatus };
    }
    if (!shouldRetry(last) || attempt === NOTIFICATION_MAX_ATTEMPTS) return failedOutcome(attempt, last);
    await sleep(backoff(attempt), undefined, { signal: delivery.signal }).catch(() => undefined);
  }
  return failedOutcome(NOTIFICATION_MAX_ATTEMPTS, last);
}

function failedOutcome(attempts: number, last: NotificationTry, error?: string): NotificationOutcome {
  if ('httpStatus' in last) {
    const redirect = last.httpStatus >= 300 && last.httpStatus <= 399 ? '; redirects are not followed' : '';
    return { status: 'failed', attempts, httpStatus: last.httpStatus, error: error ?? `HTTP ${last.httpStatus}${redirect}` };
  }
  return { status: 'failed', attempts, error: error ?? last.error };
}

/**
 * One signed POST. Answers with its HTTP status, or `{error}` when none came.
 * @throws WebhookAddressRefusedError when the address may not be dialed (nothing is sent).
 */
async function tryOnce(url: URL, payload: string, delivery: NotificationDelivery): Promise<NotificationTry> {
  const timeoutMs = delivery.timeoutMs ?? NOTIFICATION_TIMEOUT_MS;
  const signal = delivery.signal ? AbortSignal.any([delivery.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  let target;
  try {
    target = await delivery.addressPolicy.resolveEndpoint(url, delivery.resolve ?? systemResolver);
  } catch (error) {
    if (error instanceof WebhookAddressRefusedError) throw error;
    return { error: `its host did not resolve (${codeOf(error)})` };
  }
  const headers = signedJsonHeaders(payload, delivery.secret, (delivery.now ?? Date.now)());
  try {
    const answer = await postBounded(url, { headers, payload, lookup: pinnedLookup(target.addresses), signal, limit: ANSWER_LIMIT_BYTES });
    return { httpStatus: answer.status };
  } catch (error) {
    if (signal.aborted && !delivery.signal?.aborted) return { error: `no answer within ${timeoutMs} ms` };
    return { error: `could not reach it (${codeOf(error)})` };
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'network error';
}
