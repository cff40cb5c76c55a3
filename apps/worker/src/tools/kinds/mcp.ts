import type { McpServers } from '@codemode/tools';
import { ToolCallError } from '../tool-call-error';
import type { KindCall, ResolvedTool, ToolKind } from './tool-kind';

/**
 * A tool of one of the deployment's MCP servers (`MCP.<server>.<tool>`), called with the call's
 * callKey, within the server's `timeoutMs` (SPEC §17).
 */
export class McpKind implements ToolKind {
  readonly answeredBy = 'worker';

  /** `servers`: the deployment's MCP connections, null when it configures none. */
  constructor(private readonly servers: () => Pick<McpServers, 'callTool'> | null) {}

  handles({ entry }: ResolvedTool): boolean {
    return entry.mcpBinding !== undefined && this.servers() !== null;
  }

  async call({ entry, input, signal, callKey }: KindCall): Promise<unknown> {
    const servers = this.servers();
    if (!entry.mcpBinding || !servers) throw new ToolCallError(`MCP tool ${entry.callableName} is not available.`);
    // The pipeline mapped the guest's positional args onto the tool's schema (`mapMcpArguments`): an object.
    const args = input as Record<string, unknown>;
    return servers.callTool(entry.mcpBinding.serverName, entry.mcpBinding.toolName, args, {
      callableName: entry.callableName,
      signal,
      idempotencyKey: callKey,
    });
  }
}
