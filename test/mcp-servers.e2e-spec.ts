import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeModeResult } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { freePort } from './utils/free-port';
import { TestStack } from './utils/test-stack';

jest.setTimeout(120_000);

/** The official reference server (a devDependency), run over stdio and over streamable HTTP. */
const EVERYTHING = join(__dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const REMOTE_DOWN = 'MCP server remote is not connected; its tools cannot be called right now.';

type McpStatus = { name: string; state: string };

/** `node index.js streamableHttp` on `port`; resolves once it listens. Its output is kept. */
async function startHttpEverything(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until('the HTTP server to listen', () => output.includes(`listening on port ${port}`), 20_000);
  return { child, output: () => output };
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Pids of `parent`'s children whose command line mentions `marker`. */
function childPids(parent: number, marker: string): number[] {
  return readdirSync(`/proc/${parent}/task`)
    .flatMap((task) => readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    });
}

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('MCP against the real "everything" server (stdio and streamable HTTP)', () => {
  const marker = `--codemode-e2e=${randomBytes(6).toString('hex')}`;
  let stack: TestStack;
  let client: CodeModeClient;
  let httpPort: number;
  let http: Awaited<ReturnType<typeof startHttpEverything>> | undefined;
  let workerUrl: string;

  const exec = (sid: string, code: string): Promise<CodeModeResult> => client.exec(sid, { title: 'mcp', code });
  const valueOf = (result: CodeModeResult): unknown => {
    if (result.status !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(result)}`);
    return result.value;
  };
  const mcpStates = async (): Promise<Record<string, string>> => {
    const body = (await (await fetch(`${workerUrl}/health/ready`)).json()) as { mcp: McpStatus[] };
    return Object.fromEntries(body.mcp.map((server) => [server.name, server.state]));
  };
  const metric = async (series: string): Promise<number | undefined> => {
    const text = await (await fetch(`${workerUrl}/metrics`)).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  beforeAll(async () => {
    httpPort = await freePort();
    http = await startHttpEverything(httpPort);
    stack = await TestStack.start({
      env: {
        // MCP server URLs are operator config: a loopback URL is not address-checked (SPEC §10).
        CODEMODE_MCP_SERVERS: JSON.stringify([
          { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio', marker] },
          { name: 'remote', url: `http://127.0.0.1:${httpPort}/mcp` },
        ]),
      },
    });
    client = stack.client();
    workerUrl = stack.workerUrl(stack.workers[0]);
  });
  afterAll(async () => {
    await stack?.stop();
    await stopProcess(http?.child);
  });

  it('describes MCP handles, namespace and search alike, and types structuredContent from the output schema', async () => {
    const value = valueOf(
      await exec(
        'mcp-describe',
        `const sum = await MCP.everything.getSum.describe();
         const [found] = await catalog.search('get-structured-content', { limit: 1 });
         const structured = await found.describe();
         const file = await API.read('mcp/everything.d.ts');
         return { sum, structured, declarations: file.content };`,
      ),
    ) as { sum: Record<string, unknown>; structured: Record<string, unknown>; declarations: string };
    expect(value.sum).toMatchObject({
      callableName: 'MCP.everything.getSum',
      toolName: 'get-sum',
      source: 'mcp',
      apiPath: 'mcp/everything.d.ts',
      parameters: { type: 'object', required: ['a', 'b'] },
    });
    expect(value.sum.$api).toEqual(expect.stringContaining('function getSum(input: {'));
    expect(value.structured).toMatchObject({ callableName: 'MCP.everything.getStructuredContent', outputSchema: { type: 'object' } });
    expect(value.declarations).toMatch(
      /function getStructuredContent\(input: \{[\s\S]*?\}\): Promise<McpStructuredToolResult<\{[\s\S]*?temperature: number;/u,
    );
  });

  it('rejects an isError result with the SPEC message, logged and counted as an error', async () => {
    const errorsBefore = (await metric('codemode_tool_calls_total{source="mcp",outcome="error"}')) ?? 0;
    const result = await exec(
      'mcp-iserror',
      `try { await MCP.everything.getSum({ a: 'one', b: 2 }); return 'resolved'; } catch (e) { return e.message; }`,
    );
    expect(valueOf(result)).toEqual(expect.stringMatching(/^MCP tool everything\.get-sum failed: .*Input validation error/u));
    const settled = (await client.events('mcp-iserror', { limit: 1000 })).events.filter((event) => event.type === 'tool.settled');
    expect(settled.map((event) => event.data.ok)).toEqual([false]);
    expect(await metric('codemode_tool_calls_total{source="mcp",outcome="error"}')).toBe(errorsBefore + 1);
  });

  it('names the first missing required argument', async () => {
    const result = await exec('mcp-missing', `try { await MCP.everything.getSum({}); } catch (e) { return e.message; }`);
    expect(valueOf(result)).toBe('Missing required MCP namespace argument: a');
  });

  it('names pending MCP calls MCP.<server>.<callable> with their input, telling two servers apart', async () => {
    await client.putSession('mcp-pending', { codeMode: { timeoutMs: 1500 } });
    const first = await exec(
      'mcp-pending',
      `const input = { duration: 20, steps: 1 };
       return await Promise.all([MCP.everything.triggerLongRunningOperation(input), MCP.remote.triggerLongRunningOperation(input)]);`,
    );
    expect(first).toMatchObject({ status: 'waiting', reason: 'pending_tools' });
    const waiting = first as Extract<CodeModeResult, { status: 'waiting' }>;
    expect(waiting.pendingToolCalls).toEqual([
      {
        id: 'bridge:namespace:1',
        method: 'namespace',
        tool: 'MCP.everything.triggerLongRunningOperation',
        input: { duration: 20, steps: 1 },
      },
      { id: 'bridge:namespace:2', method: 'namespace', tool: 'MCP.remote.triggerLongRunningOperation', input: { duration: 20, steps: 1 } },
    ]);
    await client.abort('mcp-pending', waiting.runId);
  });

  it('fails a call in flight when the stdio server dies, restarts the process, and keeps the namespace meanwhile', async () => {
    const [pid] = childPids(stack.workers[0].pid, marker);
    expect(pid).toBeGreaterThan(0);
    const inFlight = exec(
      'mcp-kill',
      `try { await MCP.everything.triggerLongRunningOperation({ duration: 8, steps: 1 }); return 'done'; } catch (e) { return e.message; }`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    process.kill(pid, 'SIGKILL');
    expect(valueOf(await inFlight)).toEqual(expect.stringMatching(/^MCP tool everything\.trigger-long-running-operation failed: /u));
    // A new cell sees the server's tools whatever its state (never `undefined`).
    expect(valueOf(await exec('mcp-kill', 'return [typeof MCP.everything.echo, typeof MCP.everything.getSum.describe];'))).toEqual([
      'function',
      'function',
    ]);
    const next = await until('a new stdio process', () => childPids(stack.workers[0].pid, marker).find((candidate) => candidate !== pid));
    expect(next).not.toBe(pid);
    await until('everything reconnected', async () => (await mcpStates()).everything === 'connected');
    const echoed = valueOf(await exec('mcp-kill', `return (await MCP.everything.echo({ message: 'back' })).content[0].text;`));
    expect(echoed).toBe('Echo: back');
  });

  it('keeps a stopped HTTP server listed, fails its calls with the SPEC message, and opens a new session when it is back', async () => {
    await stopProcess(http?.child);
    await until('remote down', async () => (await mcpStates()).remote !== 'connected');
    expect(await metric('codemode_mcp_servers{state="connected"}')).toBe(1);
    const away =
      ((await metric('codemode_mcp_servers{state="down"}')) ?? 0) + ((await metric('codemode_mcp_servers{state="connecting"}')) ?? 0);
    expect(away).toBe(1);

    const down = await exec(
      'mcp-http',
      `try { await MCP.remote.echo({ message: 'x' }); } catch (e) { return [typeof MCP.remote.echo, e.message]; }`,
    );
    expect(valueOf(down)).toEqual(['function', REMOTE_DOWN]);
    const view = await client.getTools('mcp-http');
    const names = view.catalog.map((tool) => tool.callableName);
    expect(names).toEqual(expect.arrayContaining(['MCP.remote.echo', 'MCP.everything.echo']));

    http = await startHttpEverything(httpPort);
    await until('remote reconnected', async () => (await mcpStates()).remote === 'connected');
    expect(http.output()).toMatch(/Session initialized with ID: [0-9a-f-]+/u);
    const echoed = valueOf(await exec('mcp-http', `return (await MCP.remote.echo({ message: 'again' })).content[0].text;`));
    expect(echoed).toBe('Echo: again');
    expect(await metric('codemode_mcp_servers{state="connected"}')).toBe(2);
    expect(await metric('codemode_mcp_servers{state="down"}')).toBe(0);
    expect((await client.getTools('mcp-http')).catalog.map((tool) => tool.callableName)).toEqual(names);
  });

  it('opens a new session after a quick HTTP server restart that forgot the old one', async () => {
    await stopProcess(http?.child);
    http = await startHttpEverything(httpPort);
    const restarted = http;
    await until('a session on the restarted server', () => /Session initialized with ID/u.test(restarted.output()));
    await until('remote reconnected', async () => (await mcpStates()).remote === 'connected');
    const echoed = valueOf(await exec('mcp-http', `return (await MCP.remote.echo({ message: 'restarted' })).content[0].text;`));
    expect(echoed).toBe('Echo: restarted');
  });
});
