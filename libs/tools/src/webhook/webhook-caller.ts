import { WebhookToolError } from '../errors';
import { signWebhookBody, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './signature';

/** Default per-call timeout of a webhook client tool (its `timeoutMs` overrides it). */
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
  /** The tool's http(s) endpoint. Never quoted in errors. */
  readonly endpoint: string;
  /** The tenant's signing secret; without one the request carries no signature header. */
  readonly secret?: string;
  /** @default 30000 */
  readonly timeoutMs?: number;
  readonly body: WebhookCallBody;
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

/** Reads the body up to `limit` bytes; returns undefined when it is larger. */
async function readBounded(response: Response, limit: number): Promise<string | undefined> {
  if (!response.body) {
    return '';
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
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

/**
 * Calls a client tool's webhook: POSTs `{tool, input, callId, runId, sessionId}` as JSON, signed
 * (see signature.ts), and returns the parsed JSON answer (an empty 2xx body is `null`).
 * Redirects are not followed, so a signed body never travels to a host the tool did not name.
 * @throws WebhookToolError with a code per failure: HTTP error, invalid JSON, oversized
 * answer, timeout, unreachable endpoint, aborted. Messages never carry the endpoint or secret.
 */
export async function callWebhookTool(options: WebhookCallOptions): Promise<unknown> {
  const { toolName, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  if (signal?.aborted) {
    throw new WebhookToolError('aborted', `webhook tool ${toolName} was aborted`);
  }
  const { input, callId, runId, sessionId } = options.body;
  const payload = JSON.stringify({ tool: toolName, input: input ?? null, callId, runId, sessionId });
  const timestamp = String(Math.floor((options.now ?? Date.now)() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', [TIMESTAMP_HEADER]: timestamp };
  if (options.secret) {
    headers[SIGNATURE_HEADER] = signWebhookBody(options.secret, timestamp, payload);
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await fetch(options.endpoint, { method: 'POST', headers, body: payload, redirect: 'manual', signal: controller.signal });
    const text = await readBounded(response, MAX_WEBHOOK_RESPONSE_BYTES);
    if (text === undefined) {
      throw new WebhookToolError('webhook_response_too_large', `webhook tool ${toolName} returned more than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`, response.status);
    }
    if (response.status < 200 || response.status > 299) {
      throw new WebhookToolError('webhook_http_error', httpErrorMessage(toolName, response.status, text), response.status);
    }
    if (text.trim() === '') {
      return null;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new WebhookToolError('webhook_invalid_json', `webhook tool ${toolName} returned invalid JSON: ${(error as Error).message}`, response.status);
    }
  } catch (error) {
    if (error instanceof WebhookToolError) {
      throw error;
    }
    if (timedOut) {
      throw new WebhookToolError('webhook_timeout', `webhook tool ${toolName} timed out after ${timeoutMs} ms`);
    }
    if (signal?.aborted) {
      throw new WebhookToolError('aborted', `webhook tool ${toolName} was aborted`);
    }
    const code = connectionCode(error) ?? 'network error';
    throw new WebhookToolError('webhook_unreachable', `webhook tool ${toolName} could not reach its endpoint (${code}); check that the endpoint is up and reachable from the worker.`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
