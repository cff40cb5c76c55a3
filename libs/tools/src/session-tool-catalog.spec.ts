import { mcpToolDefinition, withPlatformApiFiles } from '@codemode/catalog';
import type { ClientTool } from '@codemode/contracts';
import { EventLoopSlices } from './core/event-loop-slices';
import { SessionToolCatalog } from './session-tool-catalog';

/** Client and MCP tools that try to take the platform surfaces' names (SPEC §15). */
const IMPOSTORS: ClientTool[] = ['skills', 'agents', 'nodes', 'skills.read', 'agents.run'].map((name) => ({
  name,
  description: `not the ${name} surface`,
  inputSchema: { type: 'object' },
}));
const MCP_IMPOSTOR = mcpToolDefinition({
  serverName: 'skills',
  toolName: 'read',
  description: 'an MCP tool',
  inputSchema: { type: 'object' },
});

function catalog(): SessionToolCatalog {
  return new SessionToolCatalog([MCP_IMPOSTOR], IMPOSTORS, [{ name: 'skills' }], 'alpha');
}

describe('SessionToolCatalog: platform surfaces (SPEC §15)', () => {
  it('answers a dotted surface name with its synthetic entry; agents.run only with agents: true', () => {
    const built = catalog();
    expect(built.byCallableName('skills.read', { agents: false })).toMatchObject({
      callableName: 'skills.read',
      toolName: 'skills.read',
      source: 'platform',
      replaySafe: true,
      apiPath: 'skills.d.ts',
    });
    expect(built.byCallableName('skills.list', { agents: false })?.source).toBe('platform');
    expect(built.byCallableName('agents.run', { agents: false })).toBeUndefined();
    expect(built.byCallableName('agents.run', { agents: true })).toMatchObject({
      source: 'platform',
      replaySafe: false,
      apiPath: 'agents.d.ts',
    });
    expect(built.byCallableName('nodes.invoke', { agents: false })).toMatchObject({
      source: 'platform',
      replaySafe: false,
      apiPath: 'nodes.d.ts',
    });
    expect(built.byCallableName('nodes.get', { agents: false })?.replaySafe).toBe(true);
    expect(built.byCallableName('nodes.exec', { agents: true })).toBeUndefined();
    expect(built.byCallableName('skills.nope', { agents: true })).toBeUndefined();
  });

  it('never lets a client or MCP tool take a surface name; surfaces are not catalog entries', () => {
    const built = catalog();
    const names = built.entries.map((entry) => entry.callableName);
    for (const reserved of ['skills', 'agents', 'nodes', 'skills.read', 'agents.run']) expect(names).not.toContain(reserved);
    // The impostors got other names (a suffix; dots sanitized), and the MCP tool lives under MCP.
    expect(names).toEqual(expect.arrayContaining([expect.stringMatching(/^skills_[0-9a-f]{8}$/), 'skills_read', 'agents_run']));
    expect(built.entries.find((entry) => entry.mcpBinding?.serverName === 'skills')?.callableName).toMatch(/^MCP\./);
    expect(built.byCallableName('MCP.skills2.read', { agents: true })).toBeUndefined();
    expect(built.entries.some((entry) => entry.source === 'platform')).toBe(false);
    const telemetry = built.telemetry({ searchCount: 0, describeCount: 0, callCount: 0 });
    expect(telemetry.catalogSize).toBe(built.entries.length);
    expect(telemetry.sources).toEqual({ openclaw: expect.any(Number), mcp: 1, client: IMPOSTORS.length });
  });

  it('lists the run’s surfaces in its guest catalog, not among its globals; the hash differs with agents', () => {
    const built = catalog();
    const without = built.guestCatalog({ agents: false });
    const withAgents = built.guestCatalog({ agents: true });
    expect(without.surfaces).toEqual([
      { name: 'nodes.list', replaySafe: true },
      { name: 'nodes.get', replaySafe: true },
      { name: 'nodes.invoke', replaySafe: false },
      { name: 'skills.list', replaySafe: true },
      { name: 'skills.read', replaySafe: true },
    ]);
    expect(withAgents.surfaces).toEqual([...without.surfaces!, { name: 'agents.run', replaySafe: false }]);
    expect(without.globals.some((global) => global.metadata.callableName.includes('.'))).toBe(false);
    expect(built.guestCatalogHash({ agents: false })).not.toBe(built.guestCatalogHash({ agents: true }));
    expect(built.guestCatalogJson({ agents: true })).toBe(JSON.stringify(withAgents));
  });

  it('API files: nodes.d.ts and skills.d.ts always, agents.d.ts only with agents: true; none is searchable', async () => {
    const built = catalog();
    const files = await built.apiFiles(new EventLoopSlices());
    const paths = (agents: boolean) => withPlatformApiFiles(files, { agents }).map((file) => file.path);
    expect(paths(false)).toEqual(expect.arrayContaining(['results.d.ts', 'nodes.d.ts', 'skills.d.ts']));
    expect(paths(false)).not.toContain('agents.d.ts');
    expect(paths(true)).toContain('agents.d.ts');
    const found = await built.search('skills', { defaultLimit: 50, maxLimit: 50 }, new EventLoopSlices());
    expect(found.some((entry) => entry.source === 'platform')).toBe(false);
  });
});

describe('SessionToolCatalog: tenant tools (SPEC §18)', () => {
  const order: ClientTool = {
    name: 'lookup_order',
    description: 'Look up an order',
    inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    outputSchema: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'], additionalProperties: false },
    endpoint: 'https://orders.example/lookup',
  };
  const sessionTool: ClientTool = { ...order, name: 'note', endpoint: 'https://notes.example/' };
  const slices = new EventLoopSlices();

  it('shows a tenant tool with its trusted hints and a session client tool with `unknown` / `?`', () => {
    const built = new SessionToolCatalog([], [sessionTool], [], 'alpha', [order]);
    const { execDescription, catalog } = built.view({ timeoutMs: 10_000, maxOutputBytes: 65_536 });
    expect(execDescription).toContain('- lookup_order { orderId: string } -> { status: string }');
    expect(execDescription).toContain('- note unknown -> ?');
    expect(catalog.find((entry) => entry.toolName === 'lookup_order')).toMatchObject({
      source: 'client',
      trusted: true,
      input: '{ orderId: string }',
      output: '{ status: string }',
    });
    const note = catalog.find((entry) => entry.toolName === 'note');
    expect(note).toMatchObject({ source: 'client', input: 'unknown' });
    expect(note).not.toHaveProperty('trusted');
    expect(note).not.toHaveProperty('output');
  });

  it('finds a tenant tool by its parameter names in catalog.search, with trusted: true', async () => {
    const built = new SessionToolCatalog([], [sessionTool], [], 'alpha', [order]);
    const [found] = await built.search('orderId', {}, slices);
    expect(found).toMatchObject({ toolName: 'lookup_order', source: 'client', trusted: true });
  });

  it('shows a schema too deep for the compact form as `unknown` / `?`, as a core tool’s', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 12; i += 1) deep = { type: 'object', properties: { inner: deep }, required: ['inner'] };
    const built = new SessionToolCatalog([], [], [], 'alpha', [
      { ...order, inputSchema: { type: 'array', items: deep }, outputSchema: deep },
    ]);
    expect(built.view({ timeoutMs: 10_000, maxOutputBytes: 65_536 }).execDescription).toMatch(/- lookup_order [^\n]*unknown[^\n]* -> \?\n/);
  });

  it('lets a session client tool of the same name shadow the tenant tool, with its own endpoint', () => {
    const shadow: ClientTool = { ...order, description: 'the session’s own', endpoint: 'https://session.example/' };
    const built = new SessionToolCatalog([], [shadow], [], 'alpha', [order]);
    const entries = built.entries.filter((entry) => entry.toolName === 'lookup_order');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ callableName: 'lookup_order', description: 'the session’s own' });
    expect(entries[0].trusted).toBeUndefined();
    expect(built.clientTools.get('lookup_order')?.endpoint).toBe('https://session.example/');
  });

  it('orders tenant tools after core and MCP tools and before session client tools', () => {
    const built = new SessionToolCatalog([], [sessionTool], [], 'alpha', [order]);
    const sources = built.entries.map((entry) => (entry.trusted ? 'tenant' : entry.source));
    expect(sources.indexOf('tenant')).toBeGreaterThan(sources.lastIndexOf('openclaw'));
    expect(sources.indexOf('tenant')).toBeLessThan(sources.indexOf('client'));
  });
});
