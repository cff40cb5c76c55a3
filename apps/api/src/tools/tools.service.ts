import { Injectable } from '@nestjs/common';
import { ClientToolsPutSchema, type SessionRef, type ToolsView } from '@codemode/contracts';
import type { ToolDefinition, McpServerInfo } from '@codemode/catalog';
import { ClientToolsLedger, DeploymentCatalog } from '@codemode/events';
import { SessionToolCatalog } from '@codemode/tools';
import { InvalidInputException } from '../core/api-errors';

/** `PUT`/`GET /v1/sessions/{sid}/tools` (SPEC §5): client tool registration and the catalog view. */
@Injectable()
export class ToolsService {
  constructor(
    private readonly clientTools: ClientToolsLedger,
    private readonly deployment: DeploymentCatalog,
  ) {}

  /** A PUT replaces the session's client tools. */
  async put(ref: SessionRef, body: Record<string, unknown>): Promise<ToolsView> {
    const parsed = ClientToolsPutSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.map(String).join('.') || 'tools';
      throw new InvalidInputException(`${field}: ${issue.message}`, { field });
    }
    await this.clientTools.put(ref, parsed.data.tools);
    return this.view(ref);
  }

  async view(ref: SessionRef): Promise<ToolsView> {
    const [clientTools, mcp] = await Promise.all([this.clientTools.get(ref), this.deployment.readMcp()]);
    return new SessionToolCatalog(mcp.tools as ToolDefinition[], clientTools, mcp.servers as McpServerInfo[]).view();
  }
}
