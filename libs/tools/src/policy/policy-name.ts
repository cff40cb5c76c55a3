import type { CatalogEntry } from '@codemode/catalog';

/**
 * The name a policy rule matches a catalog entry by (SPEC §11): the host tool name of core and
 * client tools (`read`, `exec`, `process`, the client tool's own name), `MCP.<server>.<tool>` with
 * the configured server name and the server's own tool name for MCP tools. Never the callable name:
 * the same tool keeps its policy name whatever the guest calls it (`process_<hex>`).
 */
export function policyName(entry: Pick<CatalogEntry, 'source' | 'toolName' | 'mcpBinding'>): string {
  if (entry.source === 'mcp' && entry.mcpBinding) return `MCP.${entry.mcpBinding.serverName}.${entry.mcpBinding.toolName}`;
  return entry.toolName;
}
