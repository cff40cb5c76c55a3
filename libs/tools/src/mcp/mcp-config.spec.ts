import { McpConfigError } from '../errors';
import { parseMcpServersConfig } from './mcp-config';

describe('parseMcpServersConfig', () => {
  it('parses stdio and HTTP servers; blank means none', () => {
    expect(parseMcpServersConfig('')).toEqual([]);
    expect(parseMcpServersConfig(undefined)).toEqual([]);
    expect(
      parseMcpServersConfig(
        JSON.stringify([
          { name: 'github', command: 'node', args: ['server.js'], env: { TOKEN: 'x' }, cwd: '/srv' },
          { name: 'linear', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer y' } },
        ]),
      ),
    ).toEqual([
      { name: 'github', command: 'node', args: ['server.js'], env: { TOKEN: 'x' }, cwd: '/srv' },
      { name: 'linear', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer y' } },
    ]);
  });

  it("keeps a server's tenants (SPEC §10), in both forms", () => {
    expect(parseMcpServersConfig('[{"name":"crm","command":"node","tenants":["alpha","beta"]}]')).toEqual([
      { name: 'crm', command: 'node', tenants: ['alpha', 'beta'] },
    ]);
    expect(parseMcpServersConfig('{"crm":{"url":"https://mcp.example.com","tenants":["alpha"]}}')).toEqual([
      { name: 'crm', url: 'https://mcp.example.com', tenants: ['alpha'] },
    ]);
  });

  it("keeps a server's idempotentTools (SPEC §16) and refuses anything but tool names", () => {
    expect(parseMcpServersConfig('[{"name":"crm","command":"node","idempotentTools":["upsert_row"]}]')).toEqual([
      { name: 'crm', command: 'node', idempotentTools: ['upsert_row'] },
    ]);
    expect(() => parseMcpServersConfig('[{"name":"crm","command":"node","idempotentTools":"upsert_row"}]')).toThrow(
      'CODEMODE_MCP_SERVERS[0].idempotentTools: must be an array of tool names',
    );
    expect(() => parseMcpServersConfig('[{"name":"crm","command":"node","idempotentTools":[""]}]')).toThrow(
      'CODEMODE_MCP_SERVERS[0].idempotentTools[0]: must not hold an empty tool name',
    );
  });

  it("keeps a server's timeoutMs (SPEC §17: 100–600000 ms) and refuses one out of range or not whole", () => {
    expect(parseMcpServersConfig('[{"name":"crm","command":"node","timeoutMs":100}]')).toEqual([
      { name: 'crm', command: 'node', timeoutMs: 100 },
    ]);
    expect(parseMcpServersConfig('{"crm":{"url":"https://mcp.example.com","timeoutMs":600000}}')).toEqual([
      { name: 'crm', url: 'https://mcp.example.com', timeoutMs: 600_000 },
    ]);
    expect(() => parseMcpServersConfig('[{"name":"crm","command":"node","timeoutMs":99}]')).toThrow(
      'CODEMODE_MCP_SERVERS[0].timeoutMs: must be at least 100',
    );
    expect(() => parseMcpServersConfig('[{"name":"crm","command":"node","timeoutMs":600001}]')).toThrow(
      'CODEMODE_MCP_SERVERS[0].timeoutMs: must be at most 600000',
    );
    expect(() => parseMcpServersConfig('[{"name":"crm","command":"node","timeoutMs":1500.5}]')).toThrow(
      'CODEMODE_MCP_SERVERS[0].timeoutMs: must be a whole number of milliseconds',
    );
    expect(() => parseMcpServersConfig('[{"name":"crm","command":"node","timeoutMs":"60s"}]')).toThrow(
      'CODEMODE_MCP_SERVERS[0].timeoutMs: must be a number of milliseconds',
    );
  });

  it('accepts the map form with or without mcpServers', () => {
    const expected = [{ name: 'github', command: 'node' }];
    expect(parseMcpServersConfig('{"github":{"command":"node"}}')).toEqual(expected);
    expect(parseMcpServersConfig('{"mcpServers":{"github":{"command":"node"}}}')).toEqual(expected);
  });

  it.each([
    ['{not json', /^CODEMODE_MCP_SERVERS is not valid JSON: /u],
    ['[{"name":"a"}]', 'CODEMODE_MCP_SERVERS[0].command: exactly one of command (stdio) or url (streamable HTTP) is required'],
    [
      '[{"name":"a","command":"x","url":"http://h"}]',
      'CODEMODE_MCP_SERVERS[0].command: exactly one of command (stdio) or url (streamable HTTP) is required',
    ],
    ['[{"name":"a","url":"ftp://h"}]', 'CODEMODE_MCP_SERVERS[0].url: must be an http or https URL'],
    ['[{"name":"a","comand":"x"}]', 'CODEMODE_MCP_SERVERS[0]: unknown field comand'],
    ['[{"name":" ","command":"x"}]', 'CODEMODE_MCP_SERVERS[0].name: must not be blank'],
    ['[{"name":"a","command":"x","args":"--flag"}]', 'CODEMODE_MCP_SERVERS[0].args: must be an array of strings'],
    ['[{"name":"a","url":"http://h","env":{}}]', 'CODEMODE_MCP_SERVERS[0].env: applies to stdio servers (command) only'],
    ['[{"name":"a","command":"x"},{"name":"a","command":"y"}]', 'CODEMODE_MCP_SERVERS[1].name: duplicate server name a'],
    ['"servers"', 'CODEMODE_MCP_SERVERS: must be an array of servers'],
    ['[{"name":"a","command":"x","tenants":"alpha"}]', 'CODEMODE_MCP_SERVERS[0].tenants: must be an array of tenant ids'],
    [
      '[{"name":"a","command":"x","tenants":[]}]',
      'CODEMODE_MCP_SERVERS[0].tenants: must name at least one tenant; leave it out to show the server to every tenant',
    ],
    ['[{"name":"a","command":"x","tenants":[""]}]', 'CODEMODE_MCP_SERVERS[0].tenants[0]: must not hold an empty tenant id'],
  ])('%s is refused', (json, message) => {
    const error = (() => {
      try {
        parseMcpServersConfig(json);
      } catch (caught) {
        return caught as McpConfigError;
      }
      throw new McpConfigError('expected an error');
    })();
    expect(error).toBeInstanceOf(McpConfigError);
    if (typeof message === 'string') {
      expect(error.message).toBe(message);
    } else {
      expect(error.message).toMatch(message);
    }
  });
});
