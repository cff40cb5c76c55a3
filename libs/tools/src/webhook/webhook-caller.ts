import { ToolDeadlineError, WebhookToolError } from '../errors';
import { systemResolver, type HostResolver, type WebhookAddressPolicy } from './address-policy';
import { pinnedLookup } from './pinned-lookup';
import { signedJsonHeaders } from './signature';
import { refusalReason, WebhookAddressRefusedError } from './webhook-address-errors';
import { postBounded } from './webhook-request';

/** SPEC §17: default deadline of a webhook client tool's call (its registration's `timeoutMs` overrides it). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;
/** Largest response body read from an endpoint; tool results share the 16 MiB request ceiling. */
export const MAX_WEBHOOK_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Longest endpoint text quoted in an error message. */
export const MAX_WEBHOOK_ERROR_CHARS = 1000;

/** What the worker knows about the call; sent as the JSON body with the tool's name. */
export interface WebhookCallBody {
  readonly input: unknown;
  readonly callId: string;
  readonly runId: string;
  readonly sessionId: string;
}

export interface WebhookCallOptions {
  /** The client tool's name, as registered; named in error messages. */
  readonly toolName: string;
  /** The name the guest calls the tool by (the catalog's `callableName`): named when the call is past its deadline. */
  readonly callableName: string;
  /** The tool's http(s) endpoint. Never quoted in errors. */
  readonly endpoint: string;
  /** Which addresses the endpoint may reach (SPEC §10); checked against the address dialed. */
  readonly addressPolicy: WebhookAddressPolicy;
  /** Resolves the endpoint's host, once per call. @default the system resolver (DNS, hosts file) */
  readonly resolve?: HostResolver;
  /** The tenant's signing secret; without one the request carries no signature header. */
  readonly secret?: string;
  /**
   * A tenant tool's credential headers (SPEC §18), opened for this call: sent before the body's,
   * signature's and call key's own headers, whose names they can never take (contracts' rules).
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** The call's deadline (SPEC §17). @default 30000 */
  readonly timeoutMs?: number;
  readonly body: WebhookCallBody;
  /** The call's callKey (SPEC §16), sent as the `Idempotency-Key` header: the same on every retry of the call. */
  readonly idempotencyKey?: string;
  /** Aborts the request (the run was aborted or expired). */
  readonly signal?: AbortSignal;
  /** Clock in ms, for tests. @default Date.now */
  readonly now?: () => number;
}

/** Errno-style codes fetch reports when no HTTP exchange happened. */
function connectionCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      return code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function bounded(text: string): string {
  return text.length <= MAX_WEBHOOK_ERROR_CHARS ? text : `${text.slice(0, MAX_WEBHOOK_ERROR_CHARS)}… [truncated]`;
}

/** The message of a non-2xx answer: its JSON `error`/`message` string, else its text. */
export function httpErrorMessage(toolName: string, status: number, text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') {
      const record = parsed as Record<string, unknown>;
      for (const candidate of [record.error, record.message, (record.error as Record<string, unknown> | null)?.message]) {
        if (typeof candidate === 'string' && candidate.trim() !== '') {
          return bounded(candidate);
        }
      }
    }
  } catch {
    // not JSON: fall through to the text
  }
  return text.trim() === '' ? `webhook tool ${toolName} failed with HTTP ${status}` : bounded(text.trim());
}

/** SPEC §16: the header a webhook tool reads a call's callKey from (the body is unchanged). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/**
 * Calls a client tool's webhook: POSTs `{tool, input, callId, runId, sessionId}` as JSON, signed
 * (see signature.ts), with the call's `Idempotency-Key`, and returns the parsed JSON answer (an empty 2xx body is `null`).
 * The host is resolved once and every address checked against `addressPolicy`; the request then
 * dials only those addresses (DNS rebinding cannot swap them). Redirects are not followed: a 3xx
 * is a failed call, so a signed body never travels to a host the tool did not name.
 * @throws WebhookAddressRefusedError when the endpoint's address may not be reached (nothing is
 * sent); WebhookToolError with a code per other failure: HTTP error (3xx included), invalid JSON,
 * oversized answer, unreachable endpoint, aborted; ToolDeadlineError past `timeoutMs`. Messages never carry the endpoint, secret or headers.
 */
export async function callWebhookTool(options: WebhookCallOptions): Promise<unknown> {
  const { toolName, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  if (signal?.aborted) {
    throw new WebhookToolError('aborted', `webhook tool ${toolName} was aborted`);
  }
  const { input, callId, runId, sessionId } = options.body;
  const payload = JSON.stringify({ tool: toolName, input: input ?? null, callId, runId, sessionId });
  const headers: Record<string, string> = {
    ...options.headers,
    ...signedJsonHeaders(payload, options.secret, (options.now ?? Date.now)()),
    accept: 'application/json',
  };
  if (options.idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER] = options.idempotencyKey;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const url = new URL(options.endpoint);
    const target = await untilAborted(options.addressPolicy.resolveEndpoint(url, options.resolve ?? systemResolver), controller.signal);
    const { status, text } = await postBounded(url, {
      headers,
      payload,
      lookup: pinnedLookup(target.addresses),
      signal: controller.signal,
      limit: MAX_WEBHOOK_RESPONSE_BYTES,
    });
    if (text === undefined) {
      throw new WebhookToolError(
        'webhook_response_too_large',
        `webhook tool ${toolName} returned more than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`,
        status,
      );
    }
    if (status >= 300 && status <= 399) {
      throw new WebhookToolError(
        'webhook_http_error',
        `webhook tool ${toolName} answered with a redirect (HTTP ${status}); webhook calls do not follow redirects.`,
        status,
      );
    }
    if (status < 200 || status > 299) {
      throw new WebhookToolError('webhook_http_error', httpErrorMessage(toolName, status, text), status);
    }
    if (text.trim() === '') {
      return null;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new WebhookToolError(
        'webhook_invalid_json',
        `webhook tool ${toolName} returned invalid JSON: ${(error as Error).message}`,
        status,
      );
    }
  } catch (error) {
    if (error instanceof WebhookToolError) {
      throw error;
    }
    if (error instanceof WebhookAddressRefusedError) {
      throw new WebhookAddressRefusedError(
        error.refusal,
        `webhook tool ${toolName} may not call its endpoint: its host ${refusalReason(error.refusal)}, which client tools may not reach; the deployment's CODEMODE_WEBHOOK_ALLOW can exempt it.`,
      );
    }
    if (timedOut) {
      throw new ToolDeadlineError(options.callableName, timeoutMs);
    }
    if (signal?.aborted) {
      throw new WebhookToolError('aborted', `webhook tool ${toolName} was aborted`);
    }
    const code = connectionCode(error) ?? 'network error';
    throw new WebhookToolError(
      'webhook_unreachable',
      `webhook tool ${toolName} could not reach its endpoint (${code}); check that the endpoint is up and reachable from the worker.`,
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** `work`, or an AbortError as soon as `signal` aborts (a system DNS lookup cannot be cancelled). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DOMException('This operation was aborted', 'AbortError'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort))
      .catch(() => undefined);
  });
}
