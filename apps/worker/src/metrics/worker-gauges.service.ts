import { Injectable, OnModuleInit } from '@nestjs/common';
import { DEFAULT_MAX_PARKED, SandboxPool } from '@codemode/sandbox';
import { WorkerMetrics } from '@codemode/telemetry';
import { ShellHost } from '../shell/shell-host.service';
import { McpDeployment } from '../tools/mcp-deployment.service';

/** Pool, shell and MCP server gauges, read from memory on each scrape (cheap: no Redis). */
@Injectable()
export class WorkerGauges implements OnModuleInit {
  constructor(
    private readonly metrics: WorkerMetrics,
    private readonly pool: SandboxPool,
    private readonly shell: ShellHost,
    private readonly mcp: McpDeployment,
  ) {}

  onModuleInit(): void {
    this.metrics.addCollector(() => this.refresh());
  }

  refresh(): void {
    // The pool is started without `maxParked`, so its cap is the default (SPEC §3: 64 per worker).
    this.metrics.setGauges({ sandbox: this.pool.stats(), maxParked: DEFAULT_MAX_PARKED, shell: this.shell.counts() });
    this.metrics.setMcpServers(this.mcp.stateCounts() ?? {});
  }
}
