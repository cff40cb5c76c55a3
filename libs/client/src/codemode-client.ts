import type {
  ApprovalDecisionInput,
  ApprovalView,
  ClientToolInput,
  CodeModeExecInput,
  FleetView,
  RunList,
  SessionList,
  CodeModeResult,
  Event,
  EventPage,
  ProcessInput,
  RunView,
  SessionConfig,
  SessionPutInput,
  SessionView,
  ShellAnswer,
  ShellExecInput,
  ToolResult,
  ToolDefinitionFormat,
  ToolDefinitions,
  ToolsView,
  TranscriptEntry,
  NodeConnectInput,
  NodeResultInput,
  NodeView,
  Policy,
  SessionDeleted,
  SessionSkillsPut,
  Skill,
  SkillSummary,
  TenantApprovalView,
  TenantSkillPut,
  TenantToolPutInput,
  TenantToolView,
} from '@codemode/contracts';
import { CodeModeApiError, CodeModeConnectionError, CodeModeStreamError, isAbort } from './errors';
import { readText, type HttpAnswer } from './http-transport';
import { enc, pageQuery, parseBody, RestConnection, sessionPath, type RawResponse } from './rest-connection';
import { readSse, type SseMessage } from './sse';

export interface CodeModeClientOptions {
  /** e.g. `http://127.0.0.1:3000` */
  baseUrl: string;
  apiKey?: string;
}

export interface RequestOptions {
  /** Cancels the request (e.g. Ctrl-C in the CLI); it rejects with an AbortError. */
  signal?: AbortSignal;
}

export interface FollowOptions extends RequestOptions {
  /** Stream id to start after; unset replays the session from its first event. */
  after?: string;
}

/** Pause before reopening an event stream the server closed (it was restarting or draining). */
const RECONNECT_MS = 500;

/** Typed REST client of the Code Mode API (SPEC §2): the @codemode/client package (§18), and what the CLI, the tests and the benchmarks use. */
export class CodeModeClient {
  private readonly http: RestConnection;

  constructor(options: CodeModeClientOptions) {
    this.http = new RestConnection(options.baseUrl, options.apiKey);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** What every request of this client carries (its bearer key), for a connection it does not make itself (`codemode mcp`'s to `/mcp`). */
  authHeaders(): Record<string, string> {
    return this.http.authHeaders();
  }

  exec(sessionId: string, input: CodeModeExecInput, opts: { idempotencyKey?: string } & RequestOptions = {}): Promise<CodeModeResult> {
    const headers: Record<string, string> = {};
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    return this.http.json('POST', `${sessionPath(sessionId)}/exec`, input, headers, opts.signal);
  }

  wait(sessionId: string, runId: string, opts: { idempotencyKey?: string } & RequestOptions = {}): Promise<CodeModeResult> {
    const headers: Record<string, string> = {};
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    return this.http.json('POST', `${sessionPath(sessionId)}/wait`, { runId }, headers, opts.signal);
  }

  /** `DELETE …/runs/{runId}`: the aborted run's final result; 409 (thrown) if it had already ended. */
  abort(sessionId: string, runId: string): Promise<CodeModeResult> {
    return this.http.json('DELETE', `${sessionPath(sessionId)}/runs/${enc(runId)}`);
  }

  /** Answers pending client tool calls of a parked run; a later `wait` sees them. */
  toolResults(sessionId: string, runId: string, results: ToolResult[]): Promise<{ accepted: number }> {
    return this.http.json('POST', `${sessionPath(sessionId)}/runs/${enc(runId)}/tool-results`, { results });
  }

  /** `GET /v1/sessions`: the tenant's sessions, newest activity first; pass `next` as `cursor` for the next page. */
  listSessions(opts: { limit?: number; cursor?: string } = {}): Promise<SessionList> {
    return this.http.json('GET', `/v1/sessions${pageQuery(opts)}`);
  }

  /** `GET /v1/sessions/{sid}/runs`: the session's runs, newest request first. */
  listRuns(sessionId: string, opts: { limit?: number; cursor?: string } = {}): Promise<RunList> {
    return this.http.json('GET', `${sessionPath(sessionId)}/runs${pageQuery(opts)}`);
  }

  /** `GET /v1/fleet`: live workers, the cell queue, and the tenant's own live runs per worker. */
  fleet(): Promise<FleetView> {
    return this.http.json('GET', '/v1/fleet');
  }

  putSession(sessionId: string, input: SessionPutInput): Promise<SessionConfig> {
    return this.http.json('PUT', sessionPath(sessionId), input);
  }

  getSession(sessionId: string): Promise<SessionView> {
    return this.http.json('GET', sessionPath(sessionId));
  }

  /** `DELETE /v1/sessions/{sid}` (SPEC §10): the session and everything of it; its live runs are aborted first. */
  deleteSession(sessionId: string): Promise<SessionDeleted> {
    return this.http.json('DELETE', sessionPath(sessionId));
  }

  /** `GET /v1/sessions/{sid}/store`: the committed session store. */
  async getStore(sessionId: string): Promise<Record<string, unknown>> {
    const body = await this.http.json<{ values: Record<string, unknown> }>('GET', `${sessionPath(sessionId)}/store`);
    return body.values;
  }

  getRun(sessionId: string, runId: string): Promise<RunView> {
    return this.http.json('GET', `${sessionPath(sessionId)}/runs/${enc(runId)}`);
  }

  /** Replaces the session's client tools. */
  putTools(sessionId: string, tools: ClientToolInput[]): Promise<ToolsView> {
    return this.http.json('PUT', `${sessionPath(sessionId)}/tools`, { tools });
  }

  getTools(sessionId: string): Promise<ToolsView> {
    return this.http.json('GET', `${sessionPath(sessionId)}/tools`);
  }

  /** `PUT /v1/tools/{name}` (operator keys, SPEC §18): creates or replaces a tool of the whole tenant; `headers` are write-only. */
  putTenantTool(name: string, tool: TenantToolPutInput): Promise<TenantToolView> {
    return this.http.json('PUT', `/v1/tools/${enc(name)}`, tool);
  }

  /** `GET /v1/tools`: the tenant's tools, by name (credential header names only, never values). */
  listTenantTools(): Promise<{ tools: TenantToolView[] }> {
    return this.http.json('GET', '/v1/tools');
  }

  /** `DELETE /v1/tools/{name}` (operator keys). */
  deleteTenantTool(name: string): Promise<{ name: string; deleted: true }> {
    return this.http.json('DELETE', `/v1/tools/${enc(name)}`);
  }

  /** exec and wait in the form a model API takes (SPEC §14); a never-written session gets the defaults. */
  toolDefinitions<F extends ToolDefinitionFormat>(
    sessionId: string,
    format: F,
    opts: RequestOptions = {},
  ): Promise<{ tools: ToolDefinitions[F][] }> {
    return this.http.json('GET', `${sessionPath(sessionId)}/tools/definitions?format=${enc(format)}`, undefined, {}, opts.signal);
  }

  /** Shell `exec` (SPEC §7); tool-level failures come back as `details.status:"failed"`, not thrown. */
  shellExec(sessionId: string, input: ShellExecInput, opts: RequestOptions = {}): Promise<ShellAnswer> {
    return this.http.json('POST', `${sessionPath(sessionId)}/shell/exec`, input, {}, opts.signal);
  }

  process(sessionId: string, input: ProcessInput): Promise<ShellAnswer> {
    return this.http.json('POST', `${sessionPath(sessionId)}/process`, input);
  }

  events(sessionId: string, opts: { after?: string; limit?: number } = {}): Promise<EventPage> {
    const query = new URLSearchParams();
    if (opts.after !== undefined) query.set('after', opts.after);
    if (opts.limit !== undefined) query.set('limit', String(opts.limit));
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    return this.http.json('GET', `${sessionPath(sessionId)}/events${suffix}`);
  }

  /**
   * Live tail of the session's events over SSE. Ends quietly when `signal` aborts or the caller
   * stops iterating; when the server closes the stream (a restart), reopens it after the last
   * event seen, so nothing is skipped or repeated.
   */
  async *followEvents(sessionId: string, opts: FollowOptions = {}): AsyncGenerator<Event> {
    // Our own controller also cancels the body when the consumer breaks out of the loop.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) controller.abort();
    let after = opts.after;
    try {
      while (!controller.signal.aborted) {
        const suffix = after === undefined ? '' : `?after=${encodeURIComponent(after)}`;
        let response: HttpAnswer;
        try {
          response = await this.http.send(`${sessionPath(sessionId)}/events${suffix}`, {
            method: 'GET',
            headers: { ...this.http.authHeaders(), accept: 'text/event-stream' },
            signal: controller.signal,
          });
        } catch (error) {
          if (controller.signal.aborted && isAbort(error)) return;
          throw error;
        }
        if (response.status < 200 || response.status >= 300) {
          throw new CodeModeApiError(response.status, parseBody(await readText(response)) as never);
        }
        if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
          response.discard();
          throw new CodeModeStreamError(
            `expected an event stream from ${this.http.baseUrl}, got ${response.headers.get('content-type') ?? 'no content type'}.`,
          );
        }
        try {
          for await (const message of readSse(response.body)) {
            const event = JSON.parse(message.data) as Event;
            after = event.id;
            yield event;
          }
        } catch (error) {
          if (controller.signal.aborted) return;
          throw CodeModeConnectionError.from(this.http.baseUrl, error);
        }
        await delay(RECONNECT_MS, controller.signal);
      }
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  /** `GET /v1/nodes` (SPEC §15): the tenant's paired nodes. */
  listNodes(): Promise<{ nodes: NodeView[] }> {
    return this.http.json('GET', '/v1/nodes');
  }

  /** `DELETE /v1/nodes/{id}` (operator keys): unpairs the node and closes its connection. */
  removeNode(nodeId: string): Promise<{ id: string; deleted: true }> {
    return this.http.json('DELETE', `/v1/nodes/${enc(nodeId)}`);
  }

  /**
   * A node's connection (`POST /v1/nodes/connect`): the events the API sends it (`paired`, then
   * `invoke`s) until the stream ends or `signal` aborts. Refusals throw CodeModeApiError.
   */
  async *connectNode(input: NodeConnectInput, signal: AbortSignal): AsyncGenerator<SseMessage> {
    const response = await this.http.send('/v1/nodes/connect', {
      method: 'POST',
      headers: { ...this.http.authHeaders(), accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify(input),
      signal,
    });
    if (response.status < 200 || response.status >= 300) {
      throw new CodeModeApiError(response.status, parseBody(await readText(response)) as never);
    }
    try {
      yield* readSse(response.body);
    } catch (error) {
      if (signal.aborted) return;
      throw CodeModeConnectionError.from(this.http.baseUrl, error);
    }
  }

  /** `POST /v1/nodes/{id}/results`: a node's answer to one invocation. */
  answerNode(nodeId: string, result: NodeResultInput): Promise<{ accepted: true }> {
    return this.http.json('POST', `/v1/nodes/${enc(nodeId)}/results`, result);
  }

  /** `GET /v1/skills` (SPEC §15): the tenant's skills, names and descriptions. */
  listSkills(): Promise<{ skills: SkillSummary[] }> {
    return this.http.json('GET', '/v1/skills');
  }

  /** `PUT /v1/skills/{name}` (operator keys): creates or replaces a tenant skill. */
  putSkill(name: string, skill: TenantSkillPut): Promise<Skill> {
    return this.http.json('PUT', `/v1/skills/${enc(name)}`, skill);
  }

  /** `DELETE /v1/skills/{name}` (operator keys). */
  deleteSkill(name: string): Promise<{ name: string; deleted: true }> {
    return this.http.json('DELETE', `/v1/skills/${enc(name)}`);
  }

  /** `PUT /v1/sessions/{sid}/skills`: replaces the session's own skills. */
  putSessionSkills(sessionId: string, skills: SessionSkillsPut['skills']): Promise<{ skills: SkillSummary[] }> {
    return this.http.json('PUT', `${sessionPath(sessionId)}/skills`, { skills });
  }

  /** `GET /v1/policy` (SPEC §11): the tenant-wide tool policy. A session's own policy is `putSession`'s `policy`. */
  getPolicy(): Promise<Policy> {
    return this.http.json('GET', '/v1/policy');
  }

  /** `PUT /v1/policy` (operator keys): replaces the tenant-wide tool policy. */
  putPolicy(policy: Policy): Promise<Policy> {
    return this.http.json('PUT', '/v1/policy', policy);
  }

  /** `GET /v1/approvals` (SPEC §11): pending approvals across the tenant's sessions. */
  listApprovals(): Promise<{ approvals: TenantApprovalView[] }> {
    return this.http.json('GET', '/v1/approvals');
  }

  /** `GET /v1/sessions/{sid}/approvals`: the session's pending approvals. */
  listSessionApprovals(sessionId: string): Promise<{ approvals: ApprovalView[] }> {
    return this.http.json('GET', `${sessionPath(sessionId)}/approvals`);
  }

  /** `POST /v1/sessions/{sid}/approvals/{approvalId}` (operator keys); 409 (thrown) once decided or timed out. */
  decideApproval(sessionId: string, approvalId: string, input: ApprovalDecisionInput): Promise<ApprovalView & ApprovalDecisionInput> {
    return this.http.json('POST', `${sessionPath(sessionId)}/approvals/${enc(approvalId)}`, input);
  }

  async transcript(sessionId: string): Promise<TranscriptEntry[]> {
    const body = await this.http.json<{ entries: TranscriptEntry[] }>('GET', `${sessionPath(sessionId)}/transcript`);
    return body.entries;
  }

  /** Any request, without throwing on non-2xx: for tests of error answers. */
  raw(
    method: string,
    path: string,
    init: { body?: string | Uint8Array; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<RawResponse> {
    return this.http.raw(method, path, init);
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
