import { SandboxPool } from '@codemode/sandbox';
import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { CellSpec, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { ApprovalLedger, ClientToolsLedger, EventLog, PolicyStore, SkillLedger, type StoredApproval } from '@codemode/events';
import { DeploymentCatalog } from '@codemode/fleet';
import { ResultsStore, SessionStore } from '@codemode/store';
import {
  McpServers,
  mergePolicies,
  parseMcpServersConfig,
  postApprovalRequested,
  SessionCatalogCache,
  WebhookAddressPolicy,
  WebhookAllowList,
  withTenants,
  type McpServerConfig,
  type McpServerScope,
  type McpServerState,
  type McpServerStatus,
} from '@codemode/tools';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { ShellHost } from '../shell/shell-host.service';
import { NodeSurface } from '../nodes/node-surface';
import { surfaceHandlers, type SurfaceHandler } from './platform-surfaces';
import { RunToolHost } from './run-tool-host';

/** Builds each run's tool host: the session's catalog and the worker's tool connections. */
@Injectable()
export class ToolHosts implements OnModuleInit, OnApplicationShutdown {
  private mcp: McpServers | null = null;
  private mcpConfigs: McpServerConfig[] = [];
  private mcpStarted = false;
  private readonly mcpStates = new Map<string, McpServerState>();
  /** Republishing is serialized so an older snapshot never lands after a newer one. */
  private publishing: Promise<void> = Promise.resolve();
  private published: string | undefined;
  private readonly webhookAllow: WebhookAllowList;
  private readonly catalogs = new SessionCatalogCache();
  /** Bumped on every MCP change (state, tools, instructions): built catalogs of an older snapshot are not reused. */
  private mcpVersion = 0;
  /** SPEC §15: the platform surfaces' handlers, shared by every run. */
  private readonly surfaces: ReadonlyMap<string, SurfaceHandler>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly events: EventLog,
    private readonly clientTools: ClientToolsLedger,
    private readonly results: ResultsStore,
    private readonly sessionStore: SessionStore,
    private readonly shell: ShellHost,
    private readonly deployment: DeploymentCatalog,
    private readonly metrics: WorkerMetrics,
    private readonly pool: SandboxPool,
    private readonly tenancy: WorkerTenancy,
    private readonly policies: PolicyStore,
    private readonly approvals: ApprovalLedger,
    skills: SkillLedger,
    nodes: NodeSurface,
  ) {
    this.webhookAllow = new WebhookAllowList(config.tenancySettings.webhookAllow);
    this.surfaces = surfaceHandlers({ skills, nodes });
  }

  /**
   * Connects the deployment's MCP servers before the worker takes cells. A server that fails is
   * retried with backoff; every change of tools is republished for the API's `GET /tools`.
   */
  async onModuleInit(): Promise<void> {
    const configs = parseMcpServersConfig(this.config.mcpServersJson ?? undefined);
    if (configs.length === 0) return;
    this.mcpConfigs = configs;
    this.mcp = new McpServers(configs, {
      onError: (server, error) =>
        this.logger.warn({ server, err: error }, 'MCP server not connected; retrying (its tools stay listed, calls fail meanwhile)'),
      onChange: (server, state) => this.mcpChanged(server, state),
    });
    await this.mcp.start();
    this.mcpStarted = true;
    await this.publishMcp();
    this.logger.info({ servers: this.mcp.statuses() }, 'MCP servers started');
  }

  /** Each configured MCP server and its state (worker `/health/ready`). */
  mcpStatuses(): McpServerStatus[] {
    return this.mcp?.statuses() ?? [];
  }

  /** Servers per state (`codemode_mcp_servers{state}`). */
  mcpStateCounts(): Record<McpServerState, number> | undefined {
    return this.mcp?.stateCounts();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.mcp?.close();
  }

  async create(ref: SessionRef, runId: string, epoch: number, spec: CellSpec): Promise<RunToolHost> {
    // Read once per run (and again when another worker resumes or replays it), together: one socket
    // write. The list itself (up to 16 MiB) is read only when its version's catalog is not kept.
    const [toolsVersion, [tenantPolicy, sessionPolicy]] = await Promise.all([this.clientTools.version(ref), this.policies.both(ref)]);
    const catalog = await this.catalogs.catalog(
      ref.tenant,
      { version: toolsVersion, read: () => this.clientTools.snapshot(ref) },
      { version: this.mcpVersion, tools: () => this.mcp?.listTools() ?? [], servers: () => this.mcpServers() },
    );
    return new RunToolHost(
      {
        ref,
        runId,
        epoch,
        limits: spec.limits,
        shell: spec.shell,
        agentId: spec.agentId,
        awaitResults: spec.awaitResults,
        agents: spec.agents ?? false,
        restartSafe: spec.restartSafe,
      },
      catalog,
      {
        events: this.events,
        shell: this.shell,
        mcp: this.mcp,
        results: this.results,
        sessionStore: this.sessionStore,
        webhookSecret: this.config.webhookSecrets.get(ref.tenant),
        // Read per call: the deployment's mode can change while a run is parked (SPEC §10 "Mode").
        webhookPolicy: () => new WebhookAddressPolicy(this.webhookAllow, this.tenancy.mode),
        metrics: this.metrics,
        stopRun: (id) => this.pool.discard(id),
        approvals: this.approvals,
        approvalTimeoutMs: this.config.approvalTimeoutSeconds * 1000,
        approvalRequested: (at, approval) => this.notifyApproval(at, approval),
        readPolicy: async () => mergePolicies(...(await this.policies.both(ref))),
        surfaces: this.surfaces,
      },
      mergePolicies(tenantPolicy, sessionPolicy),
    );
  }

  /** SPEC §11: `CODEMODE_APPROVAL_WEBHOOK`, when set, hears of every new approval; a failure is only logged. */
  private notifyApproval(ref: SessionRef, approval: StoredApproval): void {
    const url = this.config.approvalWebhook;
    if (url === null) return;
    const body = { type: 'approval.requested' as const, tenant: ref.tenant, sessionId: ref.sessionId, ...approval };
    postApprovalRequested(url, body, this.config.webhookSecrets.get(ref.tenant)).catch((error: unknown) =>
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, approvalId: approval.approvalId, err: error },
        'approval webhook not delivered',
      ),
    );
  }

  /** The MCP servers whose tools are listed, with the tenants each serves. */
  private mcpServers(): McpServerScope[] {
    return withTenants(this.mcp?.serverInfo() ?? [], this.mcpConfigs);
  }

  private mcpChanged(server: string, state: McpServerState): void {
    this.mcpVersion += 1;
    if (this.mcpStates.get(server) !== state) {
      this.mcpStates.set(server, state);
      this.logger.info({ server, state }, `MCP server ${state}`);
    }
    if (!this.mcpStarted) return;
    this.publishing = this.publishing
      .then(() => this.publishMcp())
      .catch((error: unknown) => this.logger.warn({ err: error }, 'MCP catalog not republished'));
  }

  /** Publishes the MCP catalog for the API when it differs from what this worker last published. */
  private async publishMcp(): Promise<void> {
    if (!this.mcp) return;
    const snapshot = { tools: this.mcp.listTools(), servers: this.mcpServers() };
    const text = JSON.stringify(snapshot);
    if (text === this.published) return;
    await this.deployment.publishMcp(snapshot);
    this.published = text;
  }
}
