import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { SkillLedger } from '@codemode/events';
import { HeaderVault, WebhookAddressPolicy, WebhookAllowList } from '@codemode/tools';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { NodeSurface } from '../nodes/node-surface';
import { ShellHost } from '../shell/shell-host.service';
import { toolKinds, type ToolKindDeps } from './kinds/registry';
import { surfaceHandlers } from './kinds/surface-handlers';
import type { ToolKind } from './kinds/tool-kind';
import { McpDeployment } from './mcp-deployment.service';
import { WebhookRefusalWarnings } from './webhook-refusal-warnings';

/** The worker's connections every kind of tool call goes through, shared by every run. */
@Injectable()
export class ToolKinds {
  private readonly deps: ToolKindDeps;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    shell: ShellHost,
    mcp: McpDeployment,
    tenancy: WorkerTenancy,
    skills: SkillLedger,
    nodes: NodeSurface,
  ) {
    const allow = new WebhookAllowList(config.tenancySettings.webhookAllow);
    this.deps = {
      shell,
      mcp: () => mcp.servers(),
      webhooks: {
        addressPolicy: () => new WebhookAddressPolicy(allow, tenancy.mode),
        secretOf: (tenant) => config.webhookSecrets.get(tenant),
        headerVault: config.secretsKeys === null ? null : new HeaderVault(config.secretsKeys.current, config.secretsKeys.previous),
        refusals: new WebhookRefusalWarnings(logger),
      },
      surfaces: surfaceHandlers({ skills, nodes, nodeInvokeTimeoutMs: config.nodeInvokeTimeoutMs }),
    };
  }

  /** The kinds of one run's tool calls (the platform-answered kind keeps the run's awaited calls). */
  forRun(): ToolKind[] {
    return toolKinds(this.deps);
  }
}
