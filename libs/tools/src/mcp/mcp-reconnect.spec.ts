import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpServers } from './mcp-servers';
import { reconnectDelayMs } from './mcp-reconnect';

const FIXTURE = path.resolve(__dirname, '../../test-fixtures/fixture-mcp-server.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the fixture is plain CommonJS
const { createFixtureServer } = require(FIXTURE) as {
  createFixtureServer: () => { connect(transport: unknown): Promise<void>; close(): Promise<void> };
};

const UNAVAILABLE = 'MCP server tracker is not connected; its tools cannot be called right now.';

/** Pids of this process's children whose command line mentions `marker`. */
function childPids(marker: string): number[] {
  const pids = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  });
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('reconnectDelayMs', () => {
  it('retries first within 1 s, doubles, and never waits more than 10 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((retry) => reconnectDelayMs(retry, {}, 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000,
    ]);
    expect(reconnectDelayMs(1, {}, 1)).toBe(400);
    expect(reconnectDelayMs(9, { initialDelayMs: 50, maxDelayMs: 300 }, 0)).toBe(300);
  });
});

describe('McpServers reconnection (stdio)', () => {
  const marker = `--marker=${randomUUID()}`;
  const states: string[] = [];
  let servers: McpServers;

  beforeAll(async () => {
    servers = new McpServers([{ name: 'tracker', command: process.execPath, args: [FIXTURE, marker] }], {
      reconnect: { initialDelayMs: 300 },
      onChange: (_name, state) => states.push(state),
    });
    await servers.start();
  }, 30_000);
  afterAll(() => servers.close());

  it('fails the call in flight, keeps the tools listed while down, and starts a new process', async () => {
    const [pid] = childPids(marker);
    expect(pid).toBeGreaterThan(0);
    const tools = servers.listTools().map((tool) => tool.hostId);
    const inFlight = servers.callTool('tracker', 'slow', { ms: 5_000 }, { callableName: 'MCP.tracker.slow' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(pid, 'SIGKILL');
    await expect(inFlight).rejects.toMatchObject({
      code: 'mcp_call_failed',
      message: expect.stringMatching(/^MCP tool tracker\.slow failed: /u) as unknown,
    });
    expect(servers.statuses()[0].state).not.toBe('connected');
    expect(servers.listTools().map((tool) => tool.hostId)).toEqual(tools);
    expect(servers.serverInfo()).toEqual([{ name: 'tracker' }]);
    await expect(
      servers.callTool('tracker', 'create_issue', { title: 'x' }, { callableName: 'MCP.tracker.create_issue' }),
    ).rejects.toMatchObject({
      code: 'mcp_server_unavailable',
      message: UNAVAILABLE,
    });
    await until('reconnected', () => servers.connectedServers().length === 1);
    const [next] = childPids(marker);
    expect(next).not.toBe(pid);
    await expect(
      servers.callTool('tracker', 'create_issue', { title: 'after' }, { callableName: 'MCP.tracker.create_issue' }),
    ).resolves.toMatchObject({
      structuredContent: { title: 'after' },
    });
    expect(states).toEqual(['connecting', 'connected', 'down', 'connecting', 'connected']);
  }, 30_000);
});

describe('McpServers reconnection (streamable HTTP)', () => {
  let http: Server;
  let url: string;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const created: string[] = [];

  beforeAll(async () => {
    // A stateful server: a session per initialize; an unknown session id answers 404 (as after a restart).
    http = createServer((req, res) => {
      const id = req.headers['mcp-session-id'] as string | undefined;
      const existing = id ? sessions.get(id) : undefined;
      if (id && !existing) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
        return;
      }
      if (existing) {
        void existing.handleRequest(req, res);
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport);
          created.push(sessionId);
        },
      });
      void createFixtureServer()
        .connect(transport)
        .then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it('opens a new session when the server forgot the old one', async () => {
    const servers = new McpServers([{ name: 'remote', url }], { reconnect: { initialDelayMs: 100 }, healthCheckIntervalMs: 200 });
    await servers.start();
    try {
      expect(created).toHaveLength(1);
      // "Restart": every session is forgotten; the client notices by its next ping and reconnects.
      const old = [...sessions.values()];
      sessions.clear();
      await Promise.all(old.map((transport) => transport.close()));
      await until('a new session', () => created.length === 2 && servers.connectedServers().length === 1);
      await expect(
        servers.callTool('remote', 'create_issue', { title: 'again' }, { callableName: 'MCP.remote.create_issue' }),
      ).resolves.toMatchObject({
        structuredContent: { title: 'again' },
      });
    } finally {
      await servers.close();
    }
  }, 30_000);
});
