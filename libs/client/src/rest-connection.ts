import { CodeModeApiError, CodeModeConnectionError } from './errors';
import { readText, sendHttp, type HttpAnswer, type HttpRequest } from './http-transport';

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/** The HTTP side of CodeModeClient: one base URL and bearer key, JSON bodies, non-2xx answers thrown as CodeModeApiError. */
export class RestConnection {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
  ) {}

  /** Any request, without throwing on non-2xx. */
  async raw(
    method: string,
    path: string,
    init: { body?: string | Uint8Array; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<RawResponse> {
    const response = await this.send(path, {
      method,
      headers: { ...this.authHeaders(), ...init.headers },
      body: init.body,
      signal: init.signal,
    });
    let text: string;
    try {
      text = await readText(response);
    } catch (error) {
      throw CodeModeConnectionError.from(this.baseUrl, error);
    }
    return { status: response.status, headers: response.headers, body: parseBody(text), text };
  }

  /** A request with the socket-level reason of a failed connection in the error (CodeModeConnectionError). */
  async send(path: string, init: HttpRequest): Promise<HttpAnswer> {
    try {
      return await sendHttp(new URL(`${this.baseUrl}${path}`), init);
    } catch (error) {
      throw CodeModeConnectionError.from(this.baseUrl, error);
    }
  }

  async json<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<T> {
    const response = await this.raw(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      signal,
    });
    if (response.status < 200 || response.status >= 300) {
      throw new CodeModeApiError(response.status, response.body as never);
    }
    return response.body as T;
  }

  authHeaders(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }
}

export function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (e.g. Prometheus text); keep the text.
    return text;
  }
}

export function sessionPath(sessionId: string): string {
  return `/v1/sessions/${enc(sessionId)}`;
}

export function enc(segment: string): string {
  return encodeURIComponent(segment);
}

export function pageQuery(opts: { limit?: number; cursor?: string }): string {
  const query = new URLSearchParams();
  if (opts.limit !== undefined) query.set('limit', String(opts.limit));
  if (opts.cursor !== undefined) query.set('cursor', opts.cursor);
  return query.size > 0 ? `?${query.toString()}` : '';
}
