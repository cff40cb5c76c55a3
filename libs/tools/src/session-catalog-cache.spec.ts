import { createHash } from 'node:crypto';
import { mcpToolDefinition, type ToolDefinition } from '@codemode/catalog';
import type { ClientTool } from '@codemode/contracts';
import type { McpServerScope } from './mcp/mcp-tenants';
import { EventLoopSlices } from './core/event-loop-slices';
import { SessionCatalogCache, type McpCatalogSource, type StoredToolsSource } from './session-catalog-cache';
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

/** A stored list at `version` that counts how often the cache read its bytes (only to build). */
function stored(tools: readonly ClientTool[] | null, version: string): StoredToolsSource & { reads: number } {
  return {
    version,
    reads: 0,
    read() {
      this.reads += 1;
      return Promise.resolve({ version, bytes: tools === null ? null : Buffer.from(JSON.stringify(tools)) });
    },
  };
}

const slices = new EventLoopSlices();

describe('SessionCatalogCache', () => {
  it('gives the same catalog for the same tenant, list version and MCP snapshot, built once, reading the list once', async () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    const list = stored([WEATHER], 'v1');
    const first = await cache.catalog('alpha', list, mcp);
    expect(await cache.catalog('alpha', list, mcp)).toBe(first);
    expect(await cache.catalog('alpha', stored([WEATHER], 'v1'), mcp)).toBe(first);
    expect({ mcpReads: mcp.reads, listReads: list.reads, size: cache.size }).toEqual({ mcpReads: 1, listReads: 1, size: 1 });
  });

  it('builds once for runs that ask at the same time', async () => {
    const cache = new SessionCatalogCache();
    const list = stored([WEATHER], 'v1');
    const [a, b] = await Promise.all([cache.catalog('alpha', list, mcpSource()), cache.catalog('alpha', list, mcpSource())]);
    expect(a).toBe(b);
    expect(list.reads).toBe(1);
  });

  it('holds exactly what a catalog built directly holds', async () => {
    const cached = await new SessionCatalogCache().catalog('alpha', stored([WEATHER, STOCKS], 'v1'), mcpSource());
    const built = new SessionToolCatalog(TOOLS, [WEATHER, STOCKS], SERVERS, 'alpha');
    expect(cached.entries).toEqual(built.entries);
    expect(cached.guestCatalogJson()).toBe(JSON.stringify(built.guestCatalog()));
    expect(cached.guestCatalogHash()).toBe(createHash('sha256').update(JSON.stringify(built.guestCatalog())).digest('hex'));
    expect(await cached.apiFiles(slices)).toEqual(await built.apiFiles(slices));
  });

  it('builds anew when the session registers again (a new version), and from no list at all', async () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    const none = await cache.catalog('alpha', stored(null, ''), mcp);
    expect(none.byCallableName('weather', { agents: false })).toBeUndefined();
    const before = await cache.catalog('alpha', stored([WEATHER], 'v1'), mcp);
    const after = await cache.catalog('alpha', stored([WEATHER, STOCKS], 'v2'), mcp);
    expect(after).not.toBe(before);
    expect(before.byCallableName('stocks', { agents: false })).toBeUndefined();
    expect(after.byCallableName('stocks', { agents: false })?.replaySafe).toBe(true);
    const changed = await cache.catalog('alpha', stored([{ ...WEATHER, description: 'Weather and wind' }], 'v3'), mcp);
    expect(changed.byCallableName('weather', { agents: false })?.description).toBe('Weather and wind');
  });

  it('keeps a catalog under the version its bytes were read at, when a registration landed between', async () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    // The run read version v1; by the time the bytes were read the list was at v2.
    const raced: StoredToolsSource = {
      version: 'v1',
      read: () => Promise.resolve({ version: 'v2', bytes: Buffer.from(JSON.stringify([STOCKS])) }),
    };
    const built = await cache.catalog('alpha', raced, mcp);
    expect(built.byCallableName('stocks', { agents: false })).toBeDefined();
    const next = stored([STOCKS], 'v2');
    expect(await cache.catalog('alpha', next, mcp)).toBe(built);
    expect(next.reads).toBe(0);
  });

  it('builds anew when the MCP snapshot changes', async () => {
    const cache = new SessionCatalogCache();
    const first = await cache.catalog('alpha', stored(null, ''), mcpSource(1));
    const next = mcpSource(2);
    expect(await cache.catalog('alpha', stored(null, ''), next)).not.toBe(first);
    expect(next.reads).toBe(1);
  });

  it("keeps tenants apart: a server scoped to one tenant is not in another's catalog", async () => {
    const cache = new SessionCatalogCache();
    const mcp = mcpSource();
    const alpha = await cache.catalog('alpha', stored(null, ''), mcp);
    const beta = await cache.catalog('beta', stored(null, ''), mcp);
    expect(alpha.guestCatalog().mcp.map((server) => server.serverName)).toEqual(['crm', 'tracker']);
    expect(beta.guestCatalog().mcp.map((server) => server.serverName)).toEqual(['tracker']);
    // Tenant and snapshot version do not run together: ('a1', 1) is not ('a', 11).
    expect(await cache.catalog('a1', stored(null, ''), mcpSource(1))).not.toBe(await cache.catalog('a', stored(null, ''), mcpSource(11)));
  });

  it('drops the least recently used catalog beyond maxEntries', async () => {
    const cache = new SessionCatalogCache({ maxEntries: 2 });
    const mcp = mcpSource();
    const a = await cache.catalog('a', stored(null, ''), mcp);
    const b = await cache.catalog('b', stored(null, ''), mcp);
    expect(await cache.catalog('a', stored(null, ''), mcp)).toBe(a);
    await cache.catalog('c', stored(null, ''), mcp);
    expect(cache.size).toBe(2);
    expect(await cache.catalog('a', stored(null, ''), mcp)).toBe(a);
    expect(await cache.catalog('b', stored(null, ''), mcp)).not.toBe(b);
  });

  it('bounds the characters kept, and does not keep a catalog larger than the bound', async () => {
    const one = await new SessionCatalogCache().catalog('t', stored([WEATHER], 'v'), mcpSource());
    const chars = JSON.stringify([WEATHER]).length + one.guestCatalogJson().length;
    const cache = new SessionCatalogCache({ maxChars: chars + 10 });
    const mcp = mcpSource();
    const kept = await cache.catalog('t', stored([WEATHER], 'v'), mcp);
    expect(await cache.catalog('t', stored([WEATHER], 'v'), mcp)).toBe(kept);
    await cache.catalog('u', stored([WEATHER], 'v'), mcp);
    expect(cache.size).toBe(1);
    expect(await cache.catalog('t', stored([WEATHER], 'v'), mcp)).not.toBe(kept);

    const tiny = new SessionCatalogCache({ maxChars: chars - 1 });
    const built = await tiny.catalog('t', stored([WEATHER], 'v'), mcp);
    expect(tiny.size).toBe(0);
    expect(await tiny.catalog('t', stored([WEATHER], 'v'), mcp)).not.toBe(built);
  });
});
