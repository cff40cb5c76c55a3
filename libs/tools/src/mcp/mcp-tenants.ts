import type { McpServerInfo, ToolDefinition } from '@codemode/catalog';
import type { McpServerConfig } from './mcp-config';

/**
 * A connected MCP server as the catalog sees it, with the tenants it serves (SPEC §10): no
 * `tenants` means every tenant. Published by workers with the deployment's MCP tools, so the
 * API scopes `GET /tools` the same way the worker scopes cells.
 */
export interface McpServerScope extends McpServerInfo {
  readonly tenants?: readonly string[];
}

/** `servers` with the `tenants` their configuration names. */
export function withTenants(servers: readonly McpServerInfo[], configs: readonly McpServerConfig[]): McpServerScope[] {
  const tenants = new Map(configs.map((config) => [config.name, config.tenants]));
  return servers.map((server) => {
    const scope = tenants.get(server.name);
    return scope ? { ...server, tenants: scope } : server;
  });
}

/** Whether `tenant` may see `server` at all. */
export function mcpServerVisibleTo(server: McpServerScope, tenant: string): boolean {
  return server.tenants === undefined || server.tenants.includes(tenant);
}

/**
 * The MCP servers and tools `tenant` may see: servers scoped to other tenants are dropped with
 * their tools, and so is a tool whose server is not listed (its scope is unknown).
 */
export function scopeMcpToTenant(
  tools: readonly ToolDefinition[],
  servers: readonly McpServerScope[],
  tenant: string,
): { tools: ToolDefinition[]; servers: McpServerInfo[] } {
  const visible = servers.filter((server) => mcpServerVisibleTo(server, tenant));
  const names = new Set(visible.map((server) => server.name));
  return {
    tools: tools.filter((tool) => tool.mcp !== undefined && names.has(tool.mcp.serverName)),
    servers: visible.map(({ name, description }) => (description === undefined ? { name } : { name, description })),
  };
}
