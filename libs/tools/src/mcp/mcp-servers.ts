import { mcpToolDefinition, type McpServerInfo, type ToolDefinition } from '@codemode/catalog';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpCallError, McpServerUnavailableError, McpToolFailedError, ToolDeadlineError } from '../errors';
import { DEFAULT_TOOL_ERROR_MESSAGE, contentText, toolErrorMessage } from '../tool-error-message';
import type { McpServerConfig } from './mcp-config';
import { asError, McpServerConnection, type McpConnectionEvents } from './mcp-connection';
import { MCP_SERVER_STATES, type McpReconnectOptions, type McpServerState } from './mcp-reconnect';

/** Default bound of connecting (spawn + initialize + tools/list) to one server. */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;
/** SPEC §17: the deadline of one tool call to a server whose config names no `timeoutMs`. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;
/** Default time between pings of a connected server (how soon a silent loss is noticed). */
export const DEFAULT_MCP_HEALTH_CHECK_INTERVAL_MS = 10_000;

export interface McpServersOptions {
  /** Told about every failed connect attempt and every lost connection; the server is retried. */
  readonly onError?: (serverName: string, error: Error) => void;
  /** Told when a server's state, tool list or instructions changed (e.g. to republish the catalog). */
  readonly onChange?: (serverName: string, state: McpServerState) => void;
  /** How this client introduces itself to servers. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** @default 30000 */
  readonly connectTimeoutMs?: number;
  /** Where stdio servers' stderr goes. @default 'inherit' */
  readonly stderr?: 'inherit' | 'ignore' | 'pipe';
  /** Backoff between reconnect attempts. @default first retry after 500 ms, at most 10 s apart */
  readonly reconnect?: McpReconnectOptions;
  /** Time between pings of a connected server; 0 turns it off. @default 10000 */
  readonly healthCheckIntervalMs?: number;
}

export interface McpCallOptions {
  /** The name the guest calls the tool by (`MCP.<server>.<tool>` of the catalog): named when the call is past its deadline. */
  readonly callableName: string;
  readonly signal?: AbortSignal;
  /** The call's callKey (SPEC §16), sent as `_meta.idempotencyKey` of the `tools/call` request. */
  readonly idempotencyKey?: string;
}

/** A successful tool call's result as the server returned it. */
export interface McpCallResult {
  readonly content: CallToolResult['content'];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** One server's name and state, in configuration order. */
export interface McpServerStatus {
  readonly name: string;
  readonly state: McpServerState;
}

/**
 * The deployment's MCP servers, connected by one worker (SPEC §5). Each server is a stdio command
 * or a streamable-HTTP URL; one that cannot connect, or that is lost later, is reported through
 * `onError` and retried with backoff, so a broken server never stops the worker. A server's tools
 * stay listed from its first successful connect on, also while it is down, so `listTools()` (sync,
 * for catalog building) does not change when a server drops; calls to it fail meanwhile.
 */
export class McpServers {
  private readonly connections: McpServerConnection[];

  constructor(configs: readonly McpServerConfig[], options: McpServersOptions = {}) {
    const settings = {
      clientInfo: options.clientInfo ?? { name: 'codemode', version: '1.0.0' },
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
      stderr: options.stderr ?? 'inherit',
      reconnect: options.reconnect ?? {},
      healthCheckIntervalMs: options.healthCheckIntervalMs ?? DEFAULT_MCP_HEALTH_CHECK_INTERVAL_MS,
    } as const;
    const events: McpConnectionEvents = {
      changed: (connection) => options.onChange?.(connection.name, connection.state),
      error: (connection, error) => options.onError?.(connection.name, error),
    };
    this.connections = configs.map((config) => new McpServerConnection(config, settings, events));
  }

  /** Makes the first connect attempt of every server, in parallel. Never rejects. */
  async start(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.connect()));
  }

  /** Names of the servers connected right now, in configuration order. */
  connectedServers(): string[] {
    return this.connections.filter((connection) => connection.state === 'connected').map((connection) => connection.name);
  }

  /** Every configured server with its state, in configuration order. */
  statuses(): McpServerStatus[] {
    return this.connections.map(({ name, state }) => ({ name, state }));
  }

  /** How many servers are in each state (`codemode_mcp_servers{state}`). */
  stateCounts(): Record<McpServerState, number> {
    const counts = Object.fromEntries(MCP_SERVER_STATES.map((state) => [state, 0])) as Record<McpServerState, number>;
    for (const connection of this.connections) counts[connection.state] += 1;
    return counts;
  }

  /** Catalog definitions of every tool of every server that has listed its tools, connected or not. */
  listTools(): ToolDefinition[] {
    return this.connections.flatMap((connection) =>
      (connection.tools ?? []).map((tool) =>
        mcpToolDefinition({
          serverName: connection.name,
          toolName: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          inputSchema: tool.inputSchema,
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
          idempotent: tool.annotations?.idempotentHint === true || (connection.config.idempotentTools ?? []).includes(tool.name),
        }),
      ),
    );
  }

  /** Name and instructions of each server whose tools are listed, for the guest's `mcp/<server>.d.ts`. */
  serverInfo(): McpServerInfo[] {
    return this.connections
      .filter((connection) => connection.tools !== undefined)
      .map(({ name, instructions }) => (instructions ? { name, description: instructions } : { name }));
  }

  /**
   * Calls a tool. A result the server marked `isError: true` rejects (SPEC §5).
   * @throws McpServerUnavailableError when the server is not connected (the call is not sent);
   * McpToolFailedError for an `isError` result; ToolDeadlineError past the server's `timeoutMs`
   * (SPEC §17); McpCallError when the call itself fails (abort, lost connection, protocol or
   * transport error). A call that failed or gave up has the server checked.
   */
  async callTool(serverName: string, toolName: string, args: Record<string, unknown>, options: McpCallOptions): Promise<McpCallResult> {
    const connection = this.connections.find((candidate) => candidate.name === serverName);
    const label = `MCP tool ${serverName}.${toolName}`;
    if (!connection) throw new McpServerUnavailableError(serverName);
    const client = connection.client();
    const timeoutMs = connection.config.timeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
    if (options.signal?.aborted) {
      throw new McpCallError('aborted', `${label} was aborted`);
    }
    let result: CallToolResult;
    try {
      const meta = options.idempotencyKey === undefined ? {} : { _meta: { idempotencyKey: options.idempotencyKey } };
      result = (await client.callTool({ name: toolName, arguments: args, ...meta }, undefined, {
        timeout: timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      })) as CallToolResult;
    } catch (error) {
      if (options.signal?.aborted) {
        throw new McpCallError('aborted', `${label} was aborted`);
      }
      // The connection may be gone (a dead process, an HTTP session the server forgot): find out now.
      void connection.check();
      if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
        throw new ToolDeadlineError(options.callableName, timeoutMs);
      }
      throw new McpCallError('mcp_call_failed', `${label} failed: ${asError(error).message}`);
    }
    if (result.isError === true) {
      throw new McpToolFailedError(
        serverName,
        toolName,
        contentText(result.content) || toolErrorMessage(result, DEFAULT_TOOL_ERROR_MESSAGE),
      );
    }
    return {
      content: result.content,
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
      ...(result.isError !== undefined ? { isError: result.isError } : {}),
    };
  }

  /** Disconnects every server (stdio servers are terminated) and stops reconnecting. */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.close()));
  }
}
