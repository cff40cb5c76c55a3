import type { CatalogEntry } from './catalog-entry';

/** MCP servers visible to the guest: identifier → configured server name, sorted by identifier. */
export function mcpServers(entries: readonly CatalogEntry[]): Array<{ identifier: string; serverName: string; toolCount: number }> {
  const servers = new Map<string, { identifier: string; serverName: string; toolCount: number }>();
  for (const entry of entries) {
    const binding = entry.mcpBinding;
    if (!binding) {
      continue;
    }
    const server = servers.get(binding.serverIdentifier) ?? {
      identifier: binding.serverIdentifier,
      serverName: binding.serverName,
      toolCount: 0,
    };
    server.toolCount += 1;
    servers.set(binding.serverIdentifier, server);
  }
  return [...servers.values()].sort((left, right) => (left.identifier < right.identifier ? -1 : 1));
}

/** Prompt lines naming the MCP namespace and its servers; empty without MCP tools. */
export function describeMcpNamespaceForPrompt(entries: readonly CatalogEntry[]): string {
  const servers = mcpServers(entries);
  if (servers.length === 0) {
    return '';
  }
  return [
    'MCP namespace globals are available in code mode:',
    '- MCP: tools of the configured MCP servers, grouped by server.',
    `Servers: ${servers.map((server) => server.identifier).join(', ')}. Their TypeScript declarations are in mcp/index.d.ts and mcp/<server>.d.ts.`,
    'catalog.search(query) finds MCP tools too; their handles carry callableName, apiPath and describe(). Call a handle or MCP.<server>.<tool>({ ...input }) with one object argument.',
  ].join('\n');
}
