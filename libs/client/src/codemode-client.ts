import type {
  CodeModeExecInput,
  CodeModeResult,
  EventPage,
  RunView,
  SessionConfig,
  SessionPutInput,
  SessionView,
  TranscriptEntry,
} from '@codemode/contracts';
import { CodeModeApiError } from './errors';

export interface CodeModeClientOptions {
  /** e.g. `http://127.0.0.1:3000` */
  baseUrl: string;
  apiKey?: string;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/** Typed REST client of the Code Mode API (SPEC §2), used by the CLI, the tests and the benchmarks. */
export class CodeModeClient {
  constructor(private readonly options: CodeModeClientOptions) {}

  exec(sessionId: string, input: CodeModeExecInput, opts: { idempotencyKey?: string } = {}): Promise<CodeModeResult> {
    const headers: Record<string, string> = {};
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    return this.json('POST', `/v1/sessions/${enc(sessionId)}/exec`, input, headers);
  }

  wait(sessionId: string, runId: string): Promise<CodeModeResult> {
    return this.json('POST', `/v1/sessions/${enc(sessionId)}/wait`, { runId });
  }

  putSession(sessionId: string, input: SessionPutInput): Promise<SessionConfig> {
    return this.json('PUT', `/v1/sessions/${enc(sessionId)}`, input);
  }

  getSession(sessionId: string): Promise<SessionView> {
    return this.json('GET', `/v1/sessions/${enc(sessionId)}`);
  }

  getRun(sessionId: string, runId: string): Promise<RunView> {
    return this.json('GET', `/v1/sessions/${enc(sessionId)}/runs/${enc(runId)}`);
  }

  events(sessionId: string, opts: { after?: string; limit?: number } = {}): Promise<EventPage> {
    const query = new URLSearchParams();
    if (opts.after !== undefined) query.set('after', opts.after);
    if (opts.limit !== undefined) query.set('limit', String(opts.limit));
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    return this.json('GET', `/v1/sessions/${enc(sessionId)}/events${suffix}`);
  }

  async transcript(sessionId: string): Promise<TranscriptEntry[]> {
    const body = await this.json<{ entries: TranscriptEntry[] }>('GET', `/v1/sessions/${enc(sessionId)}/transcript`);
    return body.entries;
  }

  /** Any request, without throwing on non-2xx: for tests of error answers. */
  async raw(method: string, path: string, init: { body?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<RawResponse> {
    const response = await fetch(`${this.options.baseUrl}${path}`, {
      method,
      headers: { ...this.authHeaders(), ...init.headers },
      body: init.body,
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (e.g. Prometheus text); keep the text.
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  private async json<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const response = await this.raw(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    });
    if (response.status < 200 || response.status >= 300) {
      throw new CodeModeApiError(response.status, response.body as never);
    }
    return response.body as T;
  }

  private authHeaders(): Record<string, string> {
    return this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {};
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}
