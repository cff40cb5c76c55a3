import { SandboxPool } from '@codemode/sandbox';
import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { CellSpec, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { ClientToolsLedger, DeploymentCatalog, EventLog } from '@codemode/events';
import { ResultsStore, SessionStore } from '@codemode/store';
import {
  McpServers,
  parseMcpServersConfig,
  SessionToolCatalog,
  WebhookAddressPolicy,
  WebhookAllowList,
  withTenants,
  type McpServerConfig,
  type McpServerScope,
} from '@codemode/tools';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { ShellHost } from '../shell/shell-host.service';
import { RunToolHost } from './run-tool-host';

/** Builds each run's tool host: the session's catalog and the worker's tool connections. */
@Injectable()
export class ToolHosts implements OnModuleInit, OnApplicationShutdown {
  private mcp: McpServers | null = null;
  private mcpConfigs: McpServerConfig[] = [];
  private readonly webhookAllow: WebhookAllowList;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly log: EventLog,
    private readonly clientTools: ClientToolsLedger,
    private readonly results: ResultsStore,
    private readonly sessionStore: SessionStore,
    private readonly shell: ShellHost,
    private readonly deployment: DeploymentCatalog,
    private readonly metrics: WorkerMetrics,
    private readonly pool: SandboxPool,
    private readonly tenancy: WorkerTenancy,
  ) {
    this.webhookAllow = new WebhookAllowList(config.tenancySettings.webhookAllow);
  }

  /** Connects the deployment's MCP servers before the worker takes cells; a broken one is skipped. */
  async onModuleInit(): Promise<void> {
    const configs = parseMcpServersConfig(this.config.mcpServersJson ?? undefined);
    if (configs.length === 0) return;
    this.mcpConfigs = configs;
    this.mcp = new McpServers(configs, {
      onError: (server, error) => this.logger.warn({ server, err: error }, 'MCP server unavailable; its tools are left out'),
    });
    await this.mcp.start();
    await this.deployment.publishMcp({ tools: this.mcp.listTools(), servers: this.mcpServers() });
    this.logger.info({ servers: this.mcp.connectedServers() }, 'MCP servers connected');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.mcp?.close();
  }

  async create(ref: SessionRef, runId: string, epoch: number, spec: CellSpec): Promise<RunToolHost> {
    const catalog = new SessionToolCatalog(
      this.mcp?.listTools() ?? [],
      await this.clientTools.get(ref),
      this.mcpServers(),
      ref.tenant,
    );
    return new RunToolHost(
      { ref, runId, epoch, limits: spec.limits, shell: spec.shell, agentId: spec.agentId, awaitResults: spec.awaitResults, restartSafe: spec.restartSafe },
      catalog,
      {
        log: this.log,
        shell: this.shell,
        mcp: this.mcp,
        results: this.results,
        sessionStore: this.sessionStore,
        webhookSecret: this.config.webhookSecrets.get(ref.tenant),
        // Read per call: the deployment's mode can change while a run is parked (SPEC §10 "Mode").
        webhookPolicy: () => new WebhookAddressPolicy(this.webhookAllow, this.tenancy.mode),
        metrics: this.metrics,
        stopRun: (id) => this.pool.discard(id),
      },
    );
  }

  /** The connected MCP servers with the tenants each serves. */
  private mcpServers(): McpServerScope[] {
    return withTenants(this.mcp?.serverInfo() ?? [], this.mcpConfigs);
  }
}
