import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildCatalog } from '@codemode/catalog';
import { toolErrorMessage } from '../tool-error-message';
import type { McpServerConfig } from './mcp-config';
import { McpServers } from './mcp-servers';

const FIXTURE = path.resolve(__dirname, '../../test-fixtures/fixture-mcp-server.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the fixture is plain CommonJS
const { createFixtureServer } = require(FIXTURE) as {
  createFixtureServer: () => { connect(transport: unknown): Promise<void>; close(): Promise<void> };
};

describe('McpServers (stdio fixture)', () => {
  const errors: Array<[string, string]> = [];
  let servers: McpServers;

  beforeAll(async () => {
    const configs: McpServerConfig[] = [
      {
        name: 'tracker',
        command: process.execPath,
        args: [FIXTURE],
        env: { FIXTURE_GREETING: 'hello from env' },
        idempotentTools: ['delete'],
      },
      { name: 'broken', command: path.join(__dirname, 'no-such-binary') },
    ];
    servers = new McpServers(configs, {
      onError: (name, error) => errors.push([name, error.message]),
      connectTimeoutMs: 20_000,
      reconnect: { initialDelayMs: 2_000 },
    });
    await servers.start();
  }, 30_000);
  afterAll(() => servers.close());

  it('connects what it can and reports the rest (retried in the background)', () => {
    expect(servers.connectedServers()).toEqual(['tracker']);
    expect(new Set(errors.map(([name]) => name))).toEqual(new Set(['broken']));
    expect(servers.statuses()).toEqual([
      { name: 'tracker', state: 'connected' },
      { name: 'broken', state: expect.stringMatching(/^(down|connecting)$/u) as unknown },
    ]);
    expect(servers.stateCounts().connected).toBe(1);
  });

  it('lists tools as catalog definitions', () => {
    const tools = servers.listTools();
    expect(tools.map((tool) => tool.toolName).sort()).toEqual(['create_issue', 'delete', 'echo_env', 'echo_meta', 'fail', 'slow']);
    const create = tools.find((tool) => tool.toolName === 'create_issue');
    expect(create).toMatchObject({
      hostId: 'mcp:tracker:create_issue',
      source: 'mcp',
      description: 'Create an issue in the fixture tracker.',
      replaySafe: false,
      mcp: { serverName: 'tracker', toolName: 'create_issue' },
      inputSchema: { type: 'object', required: ['title'], properties: { priority: { default: 'normal' } } },
      outputSchema: { type: 'object' },
    });
    // SPEC §16: idempotent by the tool's annotations (echo_meta) or the server's idempotentTools (delete).
    expect(tools.filter((tool) => tool.idempotent).map((tool) => tool.toolName)).toEqual(['delete', 'echo_meta']);
    const catalog = buildCatalog(tools);
    expect(catalog.entries.map((entry) => entry.callableName)).toContain('MCP.tracker.delete2');
  });

  it('returns structuredContent and text as the server sent them', async () => {
    const result = await servers.callTool(
      'tracker',
      'create_issue',
      { title: 'Broken build' },
      { callableName: 'MCP.tracker.create_issue' },
    );
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Created issue #1: Broken build' }],
      structuredContent: { id: 1, title: 'Broken build', priority: 'normal' },
    });
    await expect(servers.callTool('tracker', 'delete', { id: 1 }, { callableName: 'MCP.tracker.delete' })).resolves.toEqual({
      content: [{ type: 'text', text: 'Deleted issue #1' }],
    });
    await expect(
      servers.callTool('tracker', 'echo_env', { name: 'FIXTURE_GREETING' }, { callableName: 'MCP.tracker.echo_env' }),
    ).resolves.toMatchObject({
      content: [{ text: 'hello from env' }],
    });
  });

  it('sends the callKey as _meta.idempotencyKey of tools/call (SPEC §16), and no _meta without one', async () => {
    await expect(
      servers.callTool('tracker', 'echo_meta', {}, { callableName: 'MCP.tracker.echo_meta', idempotencyKey: 'run_1:2' }),
    ).resolves.toEqual({
      content: [{ type: 'text', text: 'run_1:2' }],
    });
    await expect(servers.callTool('tracker', 'echo_meta', {}, { callableName: 'MCP.tracker.echo_meta' })).resolves.toEqual({
      content: [{ type: 'text', text: '' }],
    });
  });

  it('rejects isError results with the SPEC message carrying their text', async () => {
    await expect(servers.callTool('tracker', 'fail', { reason: 'disk full' }, { callableName: 'MCP.tracker.fail' })).rejects.toMatchObject({
      name: 'Error',
      code: 'mcp_tool_error',
      message: 'MCP tool tracker.fail failed: fixture failure\ndisk full',
    });
    expect(toolErrorMessage({ isError: true, content: [{ type: 'text', text: 'x' }] })).toBe('x');
  });

  it("gives up on a call past its server's timeoutMs with SPEC §17's sentence, and aborts calls", async () => {
    const hasty = new McpServers([{ name: 'hasty', command: process.execPath, args: [FIXTURE], timeoutMs: 200 }], {
      connectTimeoutMs: 20_000,
    });
    try {
      await hasty.start();
      const started = Date.now();
      await expect(hasty.callTool('hasty', 'slow', { ms: 600_000 }, { callableName: 'MCP.hasty.slow' })).rejects.toMatchObject({
        name: 'Error',
        code: 'tool_deadline',
        message: 'tool MCP.hasty.slow did not answer within 200 ms.',
      });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await hasty.close();
    }
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(
      servers.callTool('tracker', 'slow', { ms: 5000 }, { callableName: 'MCP.tracker.slow', signal: controller.signal }),
    ).rejects.toMatchObject({
      code: 'aborted',
      message: 'MCP tool tracker.slow was aborted',
    });
  });

  it('refuses servers that are not connected', async () => {
    await expect(servers.callTool('broken', 'anything', {}, { callableName: 'MCP.broken.anything' })).rejects.toMatchObject({
      code: 'mcp_server_unavailable',
      message: 'MCP server broken is not connected; its tools cannot be called right now.',
    });
  });
});

describe('McpServers (streamable HTTP)', () => {
  let http: Server;
  let url: string;
  const seenHeaders: Array<string | undefined> = [];

  beforeAll(async () => {
    // Stateless streamable-HTTP server: a fresh MCP server and transport per request.
    http = createServer((req, res) => {
      seenHeaders.push(req.headers['x-api-key'] as string | undefined);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const server = createFixtureServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
        void server.connect(transport).then(() => transport.handleRequest(req, res, body));
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it('connects by URL with headers and calls tools', async () => {
    const errors: string[] = [];
    const servers = new McpServers([{ name: 'remote', url, headers: { 'x-api-key': 'k1' } }], {
      onError: (_name, error) => errors.push(error.message),
    });
    await servers.start();
    try {
      expect(errors).toEqual([]);
      expect(servers.listTools().map((tool) => tool.hostId)).toContain('mcp:remote:create_issue');
      await expect(
        servers.callTool('remote', 'create_issue', { title: 'Over HTTP', priority: 'high' }, { callableName: 'MCP.remote.create_issue' }),
      ).resolves.toMatchObject({
        structuredContent: { title: 'Over HTTP', priority: 'high' },
      });
      expect(seenHeaders.every((header) => header === 'k1')).toBe(true);
    } finally {
      await servers.close();
    }
  });
});
