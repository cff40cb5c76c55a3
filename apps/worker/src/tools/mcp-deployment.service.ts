import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { DeploymentCatalog } from '@codemode/fleet';
import {
  McpServers,
  parseMcpServersConfig,
  withTenants,
  type McpCatalogSource,
  type McpServerConfig,
  type McpServerScope,
  type McpServerState,
  type McpServerStatus,
} from '@codemode/tools';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/**
 * The deployment's MCP servers on this worker (`CODEMODE_MCP_SERVERS`): connected before the
 * worker takes cells, retried with backoff when one fails, and every change of their tools
 * republished for the API's `GET /tools`.
 */
@Injectable()
export class McpDeployment implements OnModuleInit, OnApplicationShutdown {
  private mcp: McpServers | null = null;
  private configs: McpServerConfig[] = [];
  private started = false;
  private readonly states = new Map<string, McpServerState>();
  /** Republishing is serialized so an older snapshot never lands after a newer one. */
  private publishing: Promise<void> = Promise.resolve();
  private published: string | undefined;
  /** Bumped on every MCP change (state, tools, instructions): built catalogs of an older snapshot are not reused. */
  private version = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly deployment: DeploymentCatalog,
  ) {}

  async onModuleInit(): Promise<void> {
    const configs = parseMcpServersConfig(this.config.mcpServersJson ?? undefined);
    if (configs.length === 0) return;
    this.configs = configs;
    this.mcp = new McpServers(configs, {
      onError: (server, error) =>
        this.logger.warn({ server, err: error }, 'MCP server not connected; retrying (its tools stay listed, calls fail meanwhile)'),
      onChange: (server, state) => this.changed(server, state),
    });
    await this.mcp.start();
    this.started = true;
    await this.publish();
    // At debug: a start writes one line at info (SPEC §19); each server's state changes stay at info.
    this.logger.debug({ servers: this.mcp.statuses() }, 'MCP servers started');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.mcp?.close();
  }

  /** The connections tool calls go through; null when the deployment configures no server. */
  servers(): McpServers | null {
    return this.mcp;
  }

  /** What a session's catalog reads of the MCP tools now. */
  catalogSource(): McpCatalogSource {
    return { version: this.version, tools: () => this.mcp?.listTools() ?? [], servers: () => this.scopes() };
  }

  /** Each configured MCP server and its state (worker `/health/ready`). */
  statuses(): McpServerStatus[] {
    return this.mcp?.statuses() ?? [];
  }

  /** Servers per state (`codemode_mcp_servers{state}`). */
  stateCounts(): Record<McpServerState, number> | undefined {
    return this.mcp?.stateCounts();
  }

  /** The MCP servers whose tools are listed, with the tenants each serves. */
  private scopes(): McpServerScope[] {
    return withTenants(this.mcp?.serverInfo() ?? [], this.configs);
  }

  private changed(server: string, state: McpServerState): void {
    this.version += 1;
    if (this.states.get(server) !== state) {
      this.states.set(server, state);
      this.logger.info({ server, state }, `MCP server ${state}`);
    }
    if (!this.started) return;
    this.publishing = this.publishing
      .then(() => this.publish())
      .catch((error: unknown) => this.logger.warn({ err: error }, 'MCP catalog not republished'));
  }

  /** Publishes the MCP catalog for the API when it differs from what this worker last published. */
  private async publish(): Promise<void> {
    if (!this.mcp) return;
    const snapshot = { tools: this.mcp.listTools(), servers: this.scopes() };
    const text = JSON.stringify(snapshot);
    if (text === this.published) return;
    await this.deployment.publishMcp(snapshot);
    this.published = text;
  }
}
