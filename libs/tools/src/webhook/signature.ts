import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook request signing. The signed material is `<timestamp>.<raw body bytes>`, where
 * `<timestamp>` is the exact `x-codemode-timestamp` header value (Unix seconds); the signature is
 * `sha256=<hex HMAC-SHA256(secret, material)>` in `x-codemode-signature`. Binding the timestamp
 * lets a platform reject replays of an old, validly signed request.
 */

export const SIGNATURE_HEADER = 'x-codemode-signature';
export const TIMESTAMP_HEADER = 'x-codemode-timestamp';
/** How far a timestamp may be from the verifier's clock, by default. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** `sha256=<hex>` over `<timestamp>.<body>`. */
/**
 * The headers of a JSON POST the service signs (client tool webhooks, approval and exit
 * notifications): content type, `x-codemode-timestamp` (seconds) and, with a secret, the signature
 * over `<timestamp>.<payload>`. Built per request, so a retry is signed afresh.
 */
export function signedJsonHeaders(payload: string, secret: string | undefined, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json', [TIMESTAMP_HEADER]: timestamp };
  if (secret) headers[SIGNATURE_HEADER] = signWebhookBody(secret, timestamp, payload);
  return headers;
}

export function signWebhookBody(secret: string, timestamp: string, body: string | Buffer): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`, 'utf8');
  hmac.update(body);
  return `sha256=${hmac.digest('hex')}`;
}

export interface VerifyWebhookSignatureOptions {
  readonly secret: string;
  /** The raw request body, exactly as received (before any JSON parsing). */
  readonly body: string | Buffer;
  /** `x-codemode-timestamp` header value. */
  readonly timestamp: string | undefined;
  /** `x-codemode-signature` header value. */
  readonly signature: string | undefined;
  /** @default 300 */
  readonly toleranceSeconds?: number;
  /** Current time in ms. @default Date.now() */
  readonly nowMs?: number;
}

/**
 * Verifies a webhook request as a receiving platform would: the timestamp is fresh and the
 * signature matches (compared in constant time). Returns false rather than throwing.
 */
export function verifyWebhookSignature(options: VerifyWebhookSignatureOptions): boolean {
  const { timestamp, signature } = options;
  if (!timestamp || !signature || !/^\d+$/u.test(timestamp)) {
    return false;
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    return false;
  }
  const expected = Buffer.from(signWebhookBody(options.secret, timestamp, options.body), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
