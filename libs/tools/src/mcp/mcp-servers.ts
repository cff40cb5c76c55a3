import { mcpToolDefinition, type McpServerInfo, type ToolDefinition } from '@codemode/catalog';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpCallError, McpServerUnavailableError } from '../errors';
import type { McpServerConfig } from './mcp-config';

/** Default bound of connecting (spawn + initialize + tools/list) to one server. */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;
/** Default bound of one tool call when the caller gives none. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;

export interface McpServersOptions {
  /** Told about every server that fails to connect or drops later; that server is skipped. */
  readonly onError?: (serverName: string, error: Error) => void;
  /** How this client introduces itself to servers. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** @default 30000 */
  readonly connectTimeoutMs?: number;
  /** Where stdio servers' stderr goes. @default 'inherit' */
  readonly stderr?: 'inherit' | 'ignore' | 'pipe';
}

export interface McpCallOptions {
  readonly signal?: AbortSignal;
  /** @default 60000 */
  readonly timeoutMs?: number;
}

/** A tool call's result as the server returned it. */
export interface McpCallResult {
  readonly content: CallToolResult['content'];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

interface ConnectedServer {
  readonly config: McpServerConfig;
  readonly client: Client;
  tools: Tool[];
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The deployment's MCP servers, connected by one worker. Each server is a stdio command or a
 * streamable-HTTP URL; one that cannot connect is reported through `onError` and left out, so a
 * broken server never stops the worker. Tool lists are fetched at connect time and refreshed when a
 * server announces a change, so `listTools()` is synchronous for catalog building.
 */
export class McpServers {
  private readonly connected = new Map<string, ConnectedServer>();
  private closing = false;

  constructor(
    private readonly configs: readonly McpServerConfig[],
    private readonly options: McpServersOptions = {},
  ) {}

  /** Connects every configured server not yet connected, in parallel. Never rejects. */
  async start(): Promise<void> {
    this.closing = false;
    await Promise.all(this.configs.filter((config) => !this.connected.has(config.name)).map((config) => this.connect(config)));
  }

  /** Names of the servers currently connected, in configuration order. */
  connectedServers(): string[] {
    return this.configs.map((config) => config.name).filter((name) => this.connected.has(name));
  }

  /** Catalog definitions of every tool of every connected server, in configuration order. */
  listTools(): ToolDefinition[] {
    return this.connectedServers().flatMap((serverName) =>
      (this.connected.get(serverName)?.tools ?? []).map((tool) =>
        mcpToolDefinition({
          serverName,
          toolName: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          inputSchema: tool.inputSchema,
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        }),
      ),
    );
  }

  /** Name and instructions of each connected server, for the guest's `mcp/<server>.d.ts`. */
  serverInfo(): McpServerInfo[] {
    return this.connectedServers().map((name) => {
      const description = this.connected.get(name)?.client.getInstructions();
      return description ? { name, description } : { name };
    });
  }

  /**
   * Calls a tool and returns its result exactly as the server answered, `isError` results
   * included (see `toolErrorMessage`).
   * @throws McpServerUnavailableError when the server is not connected; McpCallError when the
   * call itself fails (timeout, abort, protocol or transport error).
   */
  async callTool(serverName: string, toolName: string, args: Record<string, unknown>, options: McpCallOptions = {}): Promise<McpCallResult> {
    const server = this.connected.get(serverName);
    if (!server) {
      throw new McpServerUnavailableError(serverName);
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
    const label = `MCP tool ${serverName}.${toolName}`;
    if (options.signal?.aborted) {
      throw new McpCallError('aborted', `${label} was aborted`);
    }
    try {
      const result = (await server.client.callTool({ name: toolName, arguments: args }, undefined, {
        timeout: timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      })) as CallToolResult;
      return {
        content: result.content,
        ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
        ...(result.isError !== undefined ? { isError: result.isError } : {}),
      };
    } catch (error) {
      if (options.signal?.aborted) {
        throw new McpCallError('aborted', `${label} was aborted`);
      }
      if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
        throw new McpCallError('timeout', `${label} timed out after ${timeoutMs} ms`);
      }
      throw new McpCallError('mcp_call_failed', `${label} failed: ${asError(error).message}`);
    }
  }

  /** Disconnects every server (stdio servers are terminated). */
  async close(): Promise<void> {
    this.closing = true;
    const servers = [...this.connected.values()];
    this.connected.clear();
    await Promise.all(servers.map((server) => server.client.close().catch(() => undefined)));
  }

  private transportFor(config: McpServerConfig): Transport {
    if (config.url !== undefined) {
      return new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : undefined);
    }
    return new StdioClientTransport({
      command: config.command ?? '',
      args: config.args ?? [],
      // The SDK replaces the environment when one is given; keep its safe defaults (PATH, HOME…).
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      stderr: this.options.stderr ?? 'inherit',
    });
  }

  private async connect(config: McpServerConfig): Promise<void> {
    const server: ConnectedServer = {
      config,
      tools: [],
      client: new Client(this.options.clientInfo ?? { name: 'codemode', version: '1.0.0' }, {
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error) {
                this.options.onError?.(config.name, error);
              } else if (tools) {
                server.tools = tools;
              }
            },
          },
        },
      }),
    };
    const timeout = this.options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
    try {
      await server.client.connect(this.transportFor(config), { timeout });
      server.tools = await this.listAllTools(server.client, timeout);
    } catch (error) {
      await server.client.close().catch(() => undefined);
      this.options.onError?.(config.name, asError(error));
      return;
    }
    server.client.onclose = () => {
      if (this.connected.get(config.name) === server && !this.closing) {
        this.connected.delete(config.name);
        this.options.onError?.(config.name, new Error(`MCP server ${config.name} disconnected`));
      }
    };
    this.connected.set(config.name, server);
  }

  private async listAllTools(client: Client, timeout: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }
}
