import { mcpToolDefinition, type ToolDefinition } from '@codemode/catalog';
import type { ClientTool } from '@codemode/contracts';
import { SessionToolCatalog } from '../session-tool-catalog';
import { SHARED_SLICES } from '../core/event-loop-slices';
import { mcpServerVisibleTo, scopeMcpToTenant, withTenants, type McpServerScope } from './mcp-tenants';

const tool = (serverName: string, toolName: string): ToolDefinition =>
  mcpToolDefinition({ serverName, toolName, description: `${toolName} on ${serverName}`, inputSchema: { type: 'object' } });

const TOOLS = [tool('crm', 'find_customer'), tool('tracker', 'create_issue'), tool('ghost', 'haunt')];
const SERVERS: McpServerScope[] = [{ name: 'crm', description: 'Alpha CRM', tenants: ['alpha'] }, { name: 'tracker' }];

describe('MCP tenant scoping (SPEC §10)', () => {
  it("adds each server's configured tenants", () => {
    expect(
      withTenants(
        [{ name: 'crm' }, { name: 'tracker', description: 'Issues' }],
        [
          { name: 'crm', command: 'x', tenants: ['alpha'] },
          { name: 'tracker', command: 'y' },
        ],
      ),
    ).toEqual([
      { name: 'crm', tenants: ['alpha'] },
      { name: 'tracker', description: 'Issues' },
    ]);
  });

  it('shows a server without tenants to everyone, a scoped one to its tenants only', () => {
    expect(mcpServerVisibleTo({ name: 'tracker' }, 'beta')).toBe(true);
    expect(mcpServerVisibleTo(SERVERS[0], 'alpha')).toBe(true);
    expect(mcpServerVisibleTo(SERVERS[0], 'beta')).toBe(false);
  });

  it('drops the tools of servers the tenant may not see, and of unlisted servers', () => {
    const beta = scopeMcpToTenant(TOOLS, SERVERS, 'beta');
    expect(beta.tools.map((t) => t.hostId)).toEqual([TOOLS[1].hostId]);
    expect(beta.servers).toEqual([{ name: 'tracker' }]);
    const alpha = scopeMcpToTenant(TOOLS, SERVERS, 'alpha');
    expect(alpha.tools.map((t) => t.mcp?.serverName)).toEqual(['crm', 'tracker']);
    expect(alpha.servers).toEqual([{ name: 'crm', description: 'Alpha CRM' }, { name: 'tracker' }]);
  });

  it("leaves a scoped server out of every view of another tenant's catalog", async () => {
    const client: ClientTool[] = [];
    const beta = new SessionToolCatalog(TOOLS, client, SERVERS, 'beta');
    const alpha = new SessionToolCatalog(TOOLS, client, SERVERS, 'alpha');
    const betaText = JSON.stringify([
      beta.entries,
      beta.guestCatalog(),
      beta.view({ timeoutMs: 10_000, maxOutputBytes: 65_536 }),
      await beta.apiFiles(SHARED_SLICES),
    ]);
    expect(betaText).not.toMatch(/crm|find_customer|findCustomer|Alpha CRM/iu);
    expect(beta.mcpTool('crm', 'find_customer')).toBeUndefined();
    expect(beta.guestCatalog().mcp.map((server) => server.serverName)).toEqual(['tracker']);
    expect(alpha.mcpTool('crm', 'find_customer')).toBeDefined();
    expect(alpha.guestCatalog().mcp.map((server) => server.serverName)).toEqual(['crm', 'tracker']);
    expect(JSON.stringify(await alpha.apiFiles(SHARED_SLICES))).toContain('Alpha CRM');
  });
});
