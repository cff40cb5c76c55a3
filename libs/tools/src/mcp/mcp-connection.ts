import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpServerUnavailableError } from '../errors';
import type { McpServerConfig } from './mcp-config';
import { reconnectDelayMs, type McpReconnectOptions, type McpServerState } from './mcp-reconnect';

/** How one server's connection is made and watched (see `McpServersOptions`). */
export interface McpConnectionSettings {
  readonly clientInfo: { readonly name: string; readonly version: string };
  readonly connectTimeoutMs: number;
  readonly stderr: 'inherit' | 'ignore' | 'pipe';
  readonly reconnect: McpReconnectOptions;
  /** Time between pings of a connected server; 0 turns the periodic ping off. */
  readonly healthCheckIntervalMs: number;
}

/** What a connection tells its owner. */
export interface McpConnectionEvents {
  /** The state, the tool list or the instructions changed. */
  changed(connection: McpServerConnection): void;
  /** A connect attempt failed, or the connection was lost (it is retried either way). */
  error(connection: McpServerConnection, error: Error): void;
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * One configured MCP server and its life (SPEC §5): connected once at start, watched (transport
 * close, transport errors, a failed call, a periodic ping), and when lost reconnected with backoff
 * (a new stdio process, a new HTTP session) for as long as the worker runs. The tools it last
 * listed are kept while it is away, so the catalog does not change under cells; calls made then
 * fail at once. Calls in flight when the connection is lost fail and are never sent again.
 */
export class McpServerConnection {
  private current: Client | undefined;
  private stateValue: McpServerState = 'connecting';
  private toolList: Tool[] | undefined;
  private instructionsText: string | undefined;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly settings: McpConnectionSettings,
    private readonly events: McpConnectionEvents,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get state(): McpServerState {
    return this.stateValue;
  }

  /** The tools the server last listed; undefined until it has connected once. */
  get tools(): readonly Tool[] | undefined {
    return this.toolList;
  }

  get instructions(): string | undefined {
    return this.instructionsText;
  }

  /** The connected client. @throws McpServerUnavailableError while not connected. */
  client(): Client {
    if (!this.current || this.stateValue !== 'connected') throw new McpServerUnavailableError(this.name);
    return this.current;
  }

  /** One connect attempt; on failure the next is scheduled. Never rejects. */
  async connect(): Promise<void> {
    if (this.closed) return;
    this.setState('connecting');
    const client = this.newClient();
    const timeout = this.settings.connectTimeoutMs;
    let tools: Tool[];
    try {
      await client.connect(this.transport(), { timeout });
      tools = await listAllTools(client, timeout);
    } catch (error) {
      await client.close().catch(() => undefined);
      if (this.closed) return;
      this.setState('down');
      this.events.error(this, asError(error));
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      return;
    }
    this.current = client;
    this.retries = 0;
    this.toolList = tools;
    this.instructionsText = client.getInstructions();
    client.onclose = () => this.lost(client, new Error(`MCP server ${this.name} closed the connection`));
    // A transport error (an SSE stream dropped, a refused POST) may mean the session is gone.
    client.onerror = () => void this.check();
    this.startHealthChecks();
    this.setState('connected');
  }

  /**
   * Pings the server; a failed ping counts as a lost connection. Called after transport errors
   * and failed calls, and periodically. Concurrent checks share one ping.
   */
  check(): Promise<void> {
    const client = this.current;
    if (!client || this.closed) return Promise.resolve();
    this.checking ??= client
      .ping({ timeout: Math.min(this.settings.connectTimeoutMs, 10_000) })
      .then(
        () => undefined,
        (error: unknown) => this.lost(client, asError(error)),
      )
      .finally(() => {
        this.checking = undefined;
      });
    return this.checking;
  }

  /** Stops retrying and health checks and disconnects (a stdio server is terminated). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.healthTimer);
    const client = this.current;
    this.current = undefined;
    await client?.close().catch(() => undefined);
  }

  /** `client` stopped working: drop it (its pending calls reject), report, and retry. */
  private lost(client: Client, error: Error): void {
    if (this.current !== client || this.closed) return;
    this.current = undefined;
    clearInterval(this.healthTimer);
    this.setState('down');
    this.events.error(this, error);
    void client.close().catch(() => undefined);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    this.retries += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), reconnectDelayMs(this.retries, this.settings.reconnect));
    this.retryTimer.unref();
  }

  private startHealthChecks(): void {
    clearInterval(this.healthTimer);
    if (this.settings.healthCheckIntervalMs <= 0) return;
    this.healthTimer = setInterval(() => void this.check(), this.settings.healthCheckIntervalMs);
    this.healthTimer.unref();
  }

  private setState(state: McpServerState): void {
    this.stateValue = state;
    this.events.changed(this);
  }

  private newClient(): Client {
    const client: Client = new Client(this.settings.clientInfo, {
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (this.current !== client) return;
            if (error) {
              this.events.error(this, error);
            } else if (tools) {
              this.toolList = tools;
              this.events.changed(this);
            }
          },
        },
      },
    });
    return client;
  }

  private transport(): Transport {
    const { config } = this;
    if (config.url !== undefined) {
      return new StreamableHTTPClientTransport(
        new URL(config.url),
        config.headers ? { requestInit: { headers: config.headers } } : undefined,
      );
    }
    return new StdioClientTransport({
      command: config.command ?? '',
      args: config.args ?? [],
      // The SDK replaces the environment when one is given; keep its safe defaults (PATH, HOME…).
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      stderr: this.settings.stderr,
    });
  }
}

async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}
