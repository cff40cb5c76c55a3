import { SandboxPool } from '@codemode/sandbox';
import { Inject, Injectable } from '@nestjs/common';
import type { CellSpec, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { ApprovalLedger, ClientToolsLedger, EventLog, PolicyStore, TenantToolsLedger } from '@codemode/events';
import { ResultsStore, SessionStore } from '@codemode/store';
import { mergePolicies, SessionCatalogCache } from '@codemode/tools';
import { WorkerMetrics } from '@codemode/telemetry';
import { APP_CONFIG } from '../core/tokens';
import { ApprovalNotices } from './approval-notices.service';
import { McpDeployment } from './mcp-deployment.service';
import { RunToolHost } from './run-tool-host';
import { ToolKinds } from './tool-kinds.service';

/** Builds each run's tool host: the session's catalog and policy as they stand, and the worker's tool kinds. */
@Injectable()
export class ToolHosts {
  private readonly catalogs = new SessionCatalogCache();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventLog,
    private readonly clientTools: ClientToolsLedger,
    private readonly tenantTools: TenantToolsLedger,
    private readonly policies: PolicyStore,
    private readonly approvals: ApprovalLedger,
    private readonly results: ResultsStore,
    private readonly sessionStore: SessionStore,
    private readonly metrics: WorkerMetrics,
    private readonly pool: SandboxPool,
    private readonly mcp: McpDeployment,
    private readonly kinds: ToolKinds,
    private readonly notices: ApprovalNotices,
  ) {}

  async create(ref: SessionRef, runId: string, epoch: number, spec: CellSpec): Promise<RunToolHost> {
    // Read once per run (and again when another worker resumes or replays it), together: one socket
    // write. The lists themselves (up to 16 MiB; the tenant's tools, SPEC §18) are read only when
    // their versions' catalog is not kept.
    const [toolsVersion, tenantToolsVersion, [tenantPolicy, sessionPolicy]] = await Promise.all([
      this.clientTools.version(ref),
      this.tenantTools.version(ref.tenant),
      this.policies.both(ref),
    ]);
    const catalog = await this.catalogs.catalog(
      ref.tenant,
      { version: toolsVersion, read: () => this.clientTools.snapshot(ref) },
      this.mcp.catalogSource(),
      { version: tenantToolsVersion, read: () => this.tenantTools.read(ref.tenant) },
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
        results: this.results,
        sessionStore: this.sessionStore,
        metrics: this.metrics,
        stopRun: (id) => this.pool.discard(id),
        approvals: this.approvals,
        approvalTimeoutMs: this.config.approvalTimeoutSeconds * 1000,
        approvalRequested: (at, approval) => this.notices.requested(at, approval),
        readPolicy: async () => mergePolicies(...(await this.policies.both(ref))),
        kinds: this.kinds.forRun(),
      },
      mergePolicies(tenantPolicy, sessionPolicy),
    );
  }
}
