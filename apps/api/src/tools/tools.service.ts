import { Inject, Injectable } from '@nestjs/common';
import { ClientToolsPutSchema, type ClientTool, type SessionRef, type ToolsView } from '@codemode/contracts';
import type { ToolDefinition } from '@codemode/catalog';
import { apiTenancy, effectiveLimits, type AppConfig } from '@codemode/config';
import { ClientToolsLedger, DeploymentCatalog, SessionLedger } from '@codemode/events';
import {
  findRefusedEndpoint,
  refusalReason,
  SessionToolCatalog,
  WebhookAddressPolicy,
  WebhookAllowList,
  type McpServerScope,
} from '@codemode/tools';
import { InvalidInputException } from '../core/api-errors';
import { APP_CONFIG } from '../core/tokens';

/** `PUT`/`GET /v1/sessions/{sid}/tools` (SPEC §5): client tool registration and the catalog view. */
@Injectable()
export class ToolsService {
  private readonly webhookAllow: WebhookAllowList;

  constructor(
    private readonly clientTools: ClientToolsLedger,
    private readonly deployment: DeploymentCatalog,
    private readonly sessions: SessionLedger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.webhookAllow = new WebhookAllowList(config.tenancySettings.webhookAllow);
  }

  /** A PUT replaces the session's client tools; one endpoint the address rules refuse stores nothing. */
  async put(ref: SessionRef, body: Record<string, unknown>): Promise<ToolsView> {
    const parsed = ClientToolsPutSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.map(String).join('.') || 'tools';
      throw new InvalidInputException(`${field}: ${issue.message}`, { field });
    }
    await this.checkEndpoints(parsed.data.tools);
    await this.clientTools.put(ref, parsed.data.tools);
    return this.view(ref);
  }

  async view(ref: SessionRef): Promise<ToolsView> {
    const [clientTools, mcp, session] = await Promise.all([this.clientTools.get(ref), this.deployment.readMcp(), this.sessions.get(ref)]);
    const limits = effectiveLimits(this.config, ref.tenant, session?.codeMode);
    return new SessionToolCatalog(mcp.tools as ToolDefinition[], clientTools, mcp.servers as McpServerScope[], ref.tenant).view(limits);
  }

  /** SPEC §10 "Webhooks and MCP": the registration-time address check. */
  private async checkEndpoints(tools: readonly ClientTool[]): Promise<void> {
    const refused = await findRefusedEndpoint(tools, new WebhookAddressPolicy(this.webhookAllow, apiTenancy(this.config)));
    if (!refused) return;
    const { index, tool, origin, refusal } = refused;
    throw new InvalidInputException(
      `tool ${tool.name}: endpoint ${origin} ${refusalReason(refusal)}, which client tools may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.`,
      { field: `tools.${index}.endpoint`, tool: tool.name, address: refusal.address, addressClass: refusal.addressClass },
    );
  }
}
