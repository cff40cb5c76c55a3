import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  codeModeTools,
  JSON_RPC_INVALID_PARAMS,
  JSON_RPC_SERVER_ERROR,
  JsonRpcRefusal,
  mcpToolResult,
  unknownToolError,
  type ApiErrorBody,
  type SessionRef,
} from '@codemode/contracts';
import { packageVersion } from '@codemode/config';
import type { Logger } from '@codemode/telemetry';
import { closeSignalOf, untilClosed } from '../http/connection-close';
import { bodyRefusalError, type ApiRequest, type ParsedBody } from '../http/request-context';
import { LOGGER } from '../core/tokens';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { TenantLimits } from '../quotas/tenant-limits.service';
import { CodeModeCalls } from '../runs/code-mode-calls';
import { ToolsService } from '../tools/tools.service';
import { MCP_SESSION_HEADER, mcpSession } from './mcp-session';
import { refusedAsMcpError } from './mcp-refusals';
import { McpTaskCalls } from './mcp-task-calls';
import { McpTaskRequests } from './mcp-task-requests';
import { TaskStatusChanges } from './task-status-changes';

/** SPEC §14: tools with their list changes, and tasks (listed, cancelled, made of `tools/call`). */
const SERVER_CAPABILITIES = { tools: { listChanged: true }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };

/** How often an open notification stream looks at the session's newest tasks (SPEC §14 `notifications/tasks/status`). */
export const TASKS_RECHECK_MS = 2_000;

/** How often an open notification stream (GET /mcp) looks at the session's catalog (SPEC §14 list_changed). */
export const CATALOG_RECHECK_MS = 5_000;

/**
 * `/mcp` (SPEC §14): Code Mode over MCP's streamable HTTP, with the official SDK. Every request gets
 * a fresh SDK server and a stateless transport: what an MCP session is (its Code Mode session) is
 * derived from the request's headers (`mcpSession`), so any API replica serves any request and
 * nothing lives only in one process. `exec` and `wait` go through the same calls as REST
 * (`CodeModeCalls`: quotas, then the exec/wait services with their policy, approvals and event
 * log); `tools/list` answers the session's exec description as `ToolsService` builds it for
 * `GET …/tools`. A GET opens the notification stream: it holds one of the tenant's stream slots and
 * sends `notifications/tools/list_changed` when what the session's exec description is built from
 * changes, and `notifications/tasks/status` when one of the session's newest tasks changes.
 */
@Injectable()
export class McpEndpoint {
  constructor(
    private readonly calls: CodeModeCalls,
    private readonly taskCalls: McpTaskCalls,
    private readonly tasks: McpTaskRequests,
    private readonly tools: ToolsService,
    private readonly limits: TenantLimits,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async handle(req: ApiRequest, res: ServerResponse, tenant: string): Promise<void> {
    const body = req.parsedBody ?? { kind: 'empty' };
    if (req.method === 'POST' && body.kind !== 'json') {
      const message =
        body.kind === 'empty' || body.kind === 'invalid_json' || body.kind === 'large'
          ? 'Parse error: Invalid JSON-RPC message'
          : bodyRefusalError(body);
      return jsonRpcError(res, HttpStatus.BAD_REQUEST, ErrorCode.ParseError, message);
    }
    const message = body.kind === 'json' ? body.value : undefined;
    const initialize = Array.isArray(message) ? message.some(isInitializeRequest) : isInitializeRequest(message);
    const session = mcpSession(req.headers, initialize);
    if (!session.ok) return jsonRpcError(res, session.status, ErrorCode.InvalidRequest, session.error);
    if (session.issued !== undefined) res.setHeader(MCP_SESSION_HEADER, session.issued);
    const ref: SessionRef = { tenant, sessionId: session.sessionId };

    if (req.method === 'GET') return this.notificationStream(req, res, ref);
    // SPEC §14: a message of a large POST (a batch's included) is checked on a body thread, as REST's.
    const { server, transport } = this.connect(ref, req, body.kind === 'json' && body.large === true);
    res.on('close', () => void server.close().catch(() => undefined));
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
  }

  /**
   * A server for one request: the two tools, answered in `ref`'s session. `large`: the messages
   * came in a body over `INLINE_BODY_BYTES`, so an exec's code is checked on a body thread.
   */
  private connect(ref: SessionRef, req: ApiRequest, large = false): { server: Server; transport: StreamableHTTPServerTransport } {
    const server = new Server({ name: 'codemode', version: packageVersion() }, { capabilities: SERVER_CAPABILITIES });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: codeModeTools(await this.describe(ref)).map((tool) => ({ ...tool, execution: { taskSupport: 'optional' as const } })),
    }));
    this.tasks.register(server, ref);
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name, arguments: args } = request.params;
      if (name !== 'exec' && name !== 'wait') throw new JsonRpcRefusal(JSON_RPC_INVALID_PARAMS, unknownToolError(name));
      const body: ParsedBody = large ? { kind: 'json', value: args ?? {}, large } : { kind: 'json', value: args ?? {} };
      const idempotencyKey = headerValue(req, 'idempotency-key');
      // SPEC §14 Tasks: answered once the call is recorded; the call goes on without this request.
      if (request.params.task) return this.taskCalls[name]({ ref, body, idempotencyKey, ttlMs: request.params.task.ttl });
      // No request tokens: the POST took one per message in the rate guard.
      return mcpToolResult(await refusedAsMcpError(this.calls[name](ref.tenant, ref.sessionId, body, idempotencyKey, 0)));
    });
    server.onerror = (error) =>
      this.logger.debug({ tenant: ref.tenant, sessionId: ref.sessionId, error: error.message }, 'mcp request refused');
    return { server, transport: new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }) };
  }

  private describe(ref: SessionRef): Promise<string> {
    return refusedAsMcpError(this.tools.execDescription(ref));
  }

  /**
   * GET /mcp: the stream the server's notifications go on, open until the client goes. Its slot is
   * one of the tenant's event stream slots (SPEC §10): past the quota, 429 and nothing held. The
   * client's close is watched from the request's first byte: one gone while the slot was taken
   * gives it back at once.
   */
  private async notificationStream(req: ApiRequest, res: ServerResponse, ref: SessionRef): Promise<void> {
    const closed = closeSignalOf(req, res);
    let slot;
    try {
      slot = await this.limits.stream(ref.tenant);
    } catch (error) {
      if (!(error instanceof TenantLimitException)) throw error;
      res.setHeader('retry-after', String(error.retryAfterSeconds));
      return jsonRpcError(res, HttpStatus.TOO_MANY_REQUESTS, JSON_RPC_SERVER_ERROR, (error.getResponse() as ApiErrorBody).error);
    }
    if (closed.aborted) return slot.release().catch(() => undefined);
    const { server, transport } = this.connect(ref, req);
    let last: string | undefined;
    // The inputs, not the description: building it would parse a list of up to 16 MiB every few
    // seconds per open stream. A change of inputs that leaves the description as it was only
    // makes the client list the tools again.
    const check = async (): Promise<void> => {
      const inputs = await this.tools.catalogInputs(ref).catch(() => last);
      if (last !== undefined && inputs !== last) await server.sendToolListChanged().catch(() => undefined);
      last = inputs;
    };
    const timer = setInterval(() => void check(), CATALOG_RECHECK_MS);
    timer.unref();
    const tasks = new TaskStatusChanges(async () => (await this.tasks.list(ref, undefined)).tasks);
    let looking = false;
    const tell = async (): Promise<void> => {
      // One look at a time: a slow Redis does not pile looks up.
      if (looking) return;
      looking = true;
      const changed = await tasks.next().catch(() => []);
      for (const task of changed) await server.notification({ method: 'notifications/tasks/status', params: task }).catch(() => undefined);
      looking = false;
    };
    const tasksTimer = setInterval(() => void tell(), TASKS_RECHECK_MS);
    tasksTimer.unref();
    void untilClosed(closed).then(() => {
      clearInterval(timer);
      clearInterval(tasksTimer);
      void server.close().catch(() => undefined);
      void slot.release().catch(() => undefined);
    });
    await Promise.all([check(), tell()]);
    if (closed.aborted) return;
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function headerValue(req: ApiRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
