import { Inject, Injectable } from '@nestjs/common';
import type { ClientTool } from '@codemode/contracts';
import { apiTenancy, type AppConfig } from '@codemode/config';
import { findRefusedEndpoint, refusalReason, WebhookAddressPolicy, WebhookAllowList } from '@codemode/tools';
import { InvalidInputException } from '../http/api-errors';
import { APP_CONFIG } from '../core/tokens';

/** SPEC §10 "Webhooks and MCP": the registration-time address check of client and tenant tools' endpoints. */
@Injectable()
export class ToolEndpointCheck {
  private readonly webhookAllow: WebhookAllowList;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.webhookAllow = new WebhookAllowList(config.tenancySettings.webhookAllow);
  }

  /** Throws the 400 for the first endpoint the address rules refuse; `fieldOf` names the body field of the tool at `index`. */
  async require(tools: readonly Pick<ClientTool, 'name' | 'endpoint'>[], fieldOf: (index: number) => string): Promise<void> {
    const refused = await findRefusedEndpoint(tools, new WebhookAddressPolicy(this.webhookAllow, apiTenancy(this.config)));
    if (!refused) return;
    const { index, tool, origin, refusal } = refused;
    throw new InvalidInputException(
      `tool ${tool.name}: endpoint ${origin} ${refusalReason(refusal)}, which client tools may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.`,
      { field: fieldOf(index), tool: tool.name, address: refusal.address, addressClass: refusal.addressClass },
    );
  }
}
