import { createHash } from 'node:crypto';
import { mcpToolDefinition, type ToolDefinition } from '@codemode/catalog';
import type { ClientTool } from '@codemode/contracts';
import type { McpServerScope } from './mcp/mcp-tenants';
import { SessionCatalogCache, type McpCatalogSource } from './session-catalog-cache';
import { SessionToolCatalog } from './session-tool-catalog';

const TOOLS: ToolDefinition[] = [
  mcpToolDefinition({ serverName: 'crm', toolName: 'find_customer', description: 'Finds a customer', inputSchema: { type: 'object' } }),
  mcpToolDefinition({ serverName: 'tracker', toolName: 'create_issue', description: 'Files an issue', inputSchema: { type: 'object' } }),
];
const SERVERS: McpServerScope[] = [{ name: 'crm', tenants: ['alpha'] }, { name: 'tracker' }];
const WEATHER: ClientTool = { name: 'weather', description: 'Weather for a city', inputSchema: { type: 'object' } };
const STOCKS: ClientTool = { name: 'stocks', description: 'A quote', inputSchema: { type: 'object' }, replaySafe: true };

/** An MCP snapshot that counts how often the cache read it (it reads it only to build). */
function mcpSource(version = 1): McpCatalogSource & { reads: number } {
  return {
    version,
    reads: 0,
    tools() {
      this.reads += 1;
      return TOOLS;
    },
    servers: () => SERVERS,
  };
}

describe('SessionCatalogCache', () => {
  it('gives the same catalog for the same tenant, client tools and MCP snapshot, built once', () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    const first = cache.catalog('alpha', [WEATHER], mcp);
    // The ledger parses a fresh array per read: equal tools, not the same objects.
    const second = cache.catalog('alpha', [{ ...WEATHER }], mcp);
    expect(second).toBe(first);
    expect(mcp.reads).toBe(1);
    expect(cache.size).toBe(1);
  });

  it('holds exactly what a catalog built directly holds', () => {
    const cached = new SessionCatalogCache().catalog('alpha', [WEATHER, STOCKS], mcpSource());
    const built = new SessionToolCatalog(TOOLS, [WEATHER, STOCKS], SERVERS, 'alpha');
    expect(cached.entries).toEqual(built.entries);
    expect(cached.guestCatalogJson()).toBe(JSON.stringify(built.guestCatalog()));
    expect(cached.guestCatalogHash()).toBe(createHash('sha256').update(JSON.stringify(built.guestCatalog())).digest('hex'));
    expect(cached.apiFiles()).toEqual(built.apiFiles());
  });

  it('builds anew when the session registers other tools', () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    const before = cache.catalog('alpha', [WEATHER], mcp);
    const after = cache.catalog('alpha', [WEATHER, STOCKS], mcp);
    expect(after).not.toBe(before);
    expect(before.byCallableName('stocks')).toBeUndefined();
    expect(after.byCallableName('stocks')?.replaySafe).toBe(true);
    const changed = cache.catalog('alpha', [{ ...WEATHER, description: 'Weather and wind' }], mcp);
    expect(changed.byCallableName('weather')?.description).toBe('Weather and wind');
  });

  it('builds anew when the MCP snapshot changes', () => {
    const cache = new SessionCatalogCache();
    const first = cache.catalog('alpha', [], mcpSource(1));
    const next = mcpSource(2);
    expect(cache.catalog('alpha', [], next)).not.toBe(first);
    expect(next.reads).toBe(1);
  });

  it("keeps tenants apart: a server scoped to one tenant is not in another's catalog", () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    const alpha = cache.catalog('alpha', [], mcp);
    const beta = cache.catalog('beta', [], mcp);
    expect(alpha.guestCatalog().mcp.map((server) => server.serverName)).toEqual(['crm', 'tracker']);
    expect(beta.guestCatalog().mcp.map((server) => server.serverName)).toEqual(['tracker']);
    // Tenant and snapshot version do not run together: ('a1', 1) is not ('a', 11).
    expect(cache.catalog('a1', [], mcpSource(1))).not.toBe(cache.catalog('a', [], mcpSource(11)));
  });

  it('drops the least recently used catalog beyond maxEntries', () => {
    const cache = new SessionCatalogCache({ maxEntries: 2 });
    const mcp = mcpSource();
    const a = cache.catalog('a', [], mcp);
    const b = cache.catalog('b', [], mcp);
    expect(cache.catalog('a', [], mcp)).toBe(a);
    cache.catalog('c', [], mcp);
    expect(cache.size).toBe(2);
    expect(cache.catalog('a', [], mcp)).toBe(a);
    expect(cache.catalog('b', [], mcp)).not.toBe(b);
  });

  it('bounds the characters kept, and does not keep a catalog larger than the bound', () => {
    const one = new SessionCatalogCache().catalog('t', [WEATHER], mcpSource());
    const chars = JSON.stringify(['t', 1]).length + JSON.stringify([WEATHER]).length + one.guestCatalogJson().length;
    const cache = new SessionCatalogCache({ maxChars: chars + 10 });
    const mcp = mcpSource();
    const kept = cache.catalog('t', [WEATHER], mcp);
    expect(cache.catalog('t', [WEATHER], mcp)).toBe(kept);
    cache.catalog('u', [WEATHER], mcp);
    expect(cache.size).toBe(1);
    expect(cache.catalog('t', [WEATHER], mcp)).not.toBe(kept);

    const tiny = new SessionCatalogCache({ maxChars: chars - 1 });
    const built = tiny.catalog('t', [WEATHER], mcp);
    expect(tiny.size).toBe(0);
    expect(tiny.catalog('t', [WEATHER], mcp)).not.toBe(built);
  });
});
