import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { codeModeTools, toolDefinitions, WAIT_DESCRIPTION } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

const ALPHA = 'mcp-key-alpha';
const BETA = 'mcp-key-beta';

/** The official SDK's client over streamable HTTP, as an MCP host would connect. */
async function connect(
  stack: TestStack,
  key: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const CLI = join(__dirname, '..', 'dist/libs/client/src/cli/main.js');
/** The MCP Inspector's CLI: an outside client (SPEC §14). */
const INSPECTOR = require.resolve('@modelcontextprotocol/inspector-cli/build/index.js');

/**
 * One Inspector CLI call; its stdout is the JSON answer. It runs in its own build folder: it finds
 * its package.json by a path relative to the working folder.
 */
async function inspect(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [INSPECTOR, ...args], {
    cwd: dirname(INSPECTOR),
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** The Inspector CLI's arguments for one exec of `code`. */
const inspectorExec = (code: string): string[] => [
  '--method',
  'tools/call',
  '--tool-name',
  'exec',
  '--tool-arg',
  'title=inspector',
  `code=${code}`,
];

const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, unknown>;

/** Tenants alpha and beta on a stack of their own for one describe block; its clients close with it. */
function twoTenants(env: Record<string, string> = {}): { stack: TestStack; clients: Client[] } {
  const tenants = { stack: undefined as unknown as TestStack, clients: [] as Client[] };
  beforeAll(async () => {
    tenants.stack = await TestStack.start({ apiKeys: `${ALPHA}:alpha,${BETA}:beta`, env });
  });
  afterAll(async () => {
    for (const client of tenants.clients) await client.close().catch(() => undefined);
    await tenants.stack?.stop();
  });
  return tenants;
}

describe('Code Mode over MCP (/mcp, streamable HTTP)', () => {
  const tenants = twoTenants();
  const open = async (key: string, headers?: Record<string, string>) => {
    const opened = await connect(tenants.stack, key, headers);
    tenants.clients.push(opened.client);
    return opened;
  };

  test('lists exec, with the session exec description REST shows, and wait', async () => {
    const { client, transport } = await open(ALPHA);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const { tools } = await client.listTools();

    expect(tools.map((t) => t.name)).toEqual(['exec', 'wait']);
    const view = await tenants.stack.client(ALPHA).raw('GET', `/v1/sessions/mcp-${transport.sessionId}/tools`);
    expect(view.status).toBe(200);
    expect(tools[0].description).toBe((view.body as { execDescription: string }).execDescription);
    expect(tools[0].inputSchema).toMatchObject({ type: 'object', required: ['title', 'code'] });
    expect(tools[1]).toMatchObject({ description: WAIT_DESCRIPTION, inputSchema: { type: 'object', required: ['runId'] } });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
  });

  test('runs a cell: the result as structuredContent and as its compact JSON text, recorded in the session mcp-<id>', async () => {
    const { client, transport } = await open(ALPHA);

    const result = (await client.callTool({ name: 'exec', arguments: { title: 'add', code: 'return 1 + 1' } })) as CallToolResult;

    expect(result.isError).toBe(false);
    expect(structured(result)).toMatchObject({ status: 'completed', value: 2 });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
    const events = await tenants.stack.client(ALPHA).raw('GET', `/v1/sessions/mcp-${transport.sessionId}/events`);
    expect((events.body as { events: { type: string }[] }).events.map((e) => e.type)).toEqual([
      'run.requested',
      'run.started',
      'run.completed',
    ]);
  });

  test('parks a cell and resumes it with wait', async () => {
    const { client } = await open(ALPHA);

    const parked = structured(
      await client.callTool({ name: 'exec', arguments: { title: 'park', code: 'await yield_control("later"); return 3' } }),
    );
    expect(parked).toMatchObject({ status: 'waiting', reason: 'yield', runId: expect.stringMatching(/^cm_/) });

    const resumed = await client.callTool({ name: 'wait', arguments: { runId: parked.runId } });
    expect(resumed.isError).toBe(false);
    expect(structured(resumed)).toMatchObject({ status: 'completed', value: 3 });
  });

  test('a failed cell is isError with the failed result; a bad input too, as exec answers it', async () => {
    const { client } = await open(ALPHA);

    const boom = await client.callTool({ name: 'exec', arguments: { title: 'boom', code: 'throw new RangeError("boom")' } });
    expect(boom.isError).toBe(true);
    expect(structured(boom)).toMatchObject({ status: 'failed', failurePhase: 'guest', error: expect.stringContaining('RangeError: boom') });

    const untitled = await client.callTool({ name: 'exec', arguments: { code: 'return 1' } });
    expect(untitled.isError).toBe(true);
    expect(structured(untitled)).toMatchObject({ status: 'failed', code: 'invalid_input', failurePhase: 'input' });

    const noRun = await client.callTool({ name: 'wait', arguments: {} });
    expect(structured(noRun)).toMatchObject({ status: 'failed', error: 'runId must be a non-empty string.' });

    await expect(client.callTool({ name: 'shell', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown tool shell; this server has two tools, exec and wait.'),
    });
  });

  test('a missing or unknown key is refused 401 before anything runs', async () => {
    for (const key of ['', 'not-a-key']) {
      await expect(connect(tenants.stack, key)).rejects.toMatchObject({
        code: 401,
        message: expect.stringContaining('missing or unknown API key'),
      });
    }
    const raw = await fetch(`${tenants.stack.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
  });

  test('the MCP Inspector CLI lists the tools and runs a cell over /mcp', async () => {
    const target = [`${tenants.stack.baseUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${ALPHA}`];
    const listed = (await inspect([...target, '--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(['exec', 'wait']);
    const called = await inspect([...target, ...inspectorExec('return 6 * 7')]);
    expect(called).toMatchObject({ isError: false, structuredContent: { status: 'completed', value: 42 } });
  });

  test('X-Codemode-Session names the session, in the caller\u2019s tenant only: beta sees nothing of alpha\u2019s session of that name', async () => {
    const alpha = tenants.stack.client(ALPHA);
    // A store write is committed when its cell completes; the parked run is for the wait below.
    expect((await alpha.exec('shared-name', { title: 'plant', code: 'await store("secret", "alpha-only"); return 1' })).status).toBe(
      'completed',
    );
    const planted = await alpha.exec('shared-name', { title: 'park', code: 'await yield_control(); return 1' });
    expect(planted.status).toBe('waiting');
    const { client: alphaMcp } = await open(ALPHA, { 'x-codemode-session': 'shared-name' });
    expect(
      structured(await alphaMcp.callTool({ name: 'exec', arguments: { title: 'read', code: 'return await load("secret")' } })),
    ).toMatchObject({
      status: 'completed',
      value: 'alpha-only',
    });

    const { client: beta } = await open(BETA, { 'x-codemode-session': 'shared-name' });
    const read = structured(await beta.callTool({ name: 'exec', arguments: { title: 'read', code: 'return await load("secret")' } }));
    expect(read).toMatchObject({ status: 'completed' });
    expect(read.value ?? null).toBeNull();
    const resume = structured(await beta.callTool({ name: 'wait', arguments: { runId: (planted as { runId: string }).runId } }));
    expect(resume).toMatchObject({ status: 'failed', error: expect.stringContaining('code mode run is unavailable or expired.') });
    expect(JSON.stringify(resume)).not.toContain('alpha-only');
    expect((await alpha.wait('shared-name', (planted as { runId: string }).runId)).status).toBe('completed');
  });

  test('a request without a session it can name is refused with what to send', async () => {
    const raw = await fetch(`${tenants.stack.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALPHA}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { message: string } }).error.message).toBe(
      'no Code Mode session for this MCP request: send the Mcp-Session-Id the initialize answer gave, or X-Codemode-Session: <session id>.',
    );
  });

  test('registering client tools sends notifications/tools/list_changed, and tools/list then describes them', async () => {
    const { client, transport } = await open(ALPHA);
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    const before = (await client.listTools()).tools[0].description ?? '';
    expect(before).not.toContain('lookupInvoice');
    // The notification stream (GET /mcp) is open once the client has had time to make it.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const put = await tenants.stack.client(ALPHA).raw('PUT', `/v1/sessions/mcp-${transport.sessionId}/tools`, {
      body: JSON.stringify({
        tools: [{ name: 'lookupInvoice', description: 'Find an invoice by number.', inputSchema: { type: 'object' } }],
      }),
    });
    expect(put.status).toBe(200);

    await changed;
    expect((await client.listTools()).tools[0].description).toContain('lookupInvoice');
  });

  test('an MCP session outlives the API process that began it: another one serves its next calls in the same session', async () => {
    const { client, transport } = await open(ALPHA);
    expect(structured(await client.callTool({ name: 'exec', arguments: { title: 'one', code: 'return 1' } }))).toMatchObject({ value: 1 });

    await tenants.stack.restartApi();

    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['exec', 'wait']);
    expect(structured(await client.callTool({ name: 'exec', arguments: { title: 'two', code: 'return 2' } }))).toMatchObject({ value: 2 });
    const events = (await tenants.stack.client(ALPHA).raw('GET', `/v1/sessions/mcp-${transport.sessionId}/events`)).body as {
      events: { type: string }[];
    };
    expect(events.events.filter((e) => e.type === 'run.completed')).toHaveLength(2);
  });
});

describe('GET /v1/sessions/{sid}/tools/definitions', () => {
  const tenants = twoTenants();

  test('answers exec and wait in each format, with the session exec description; a never-written session gets the defaults and stays unwritten', async () => {
    const client = tenants.stack.client(ALPHA);
    const { execDescription } = (await client.raw('GET', '/v1/sessions/defs-fresh/tools')).body as { execDescription: string };
    for (const format of ['openai', 'openai-responses', 'anthropic', 'mcp'] as const) {
      const answer = await client.raw('GET', `/v1/sessions/defs-fresh/tools/definitions?format=${format}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ tools: toolDefinitions(format, codeModeTools(execDescription)) });
    }
    // SPEC §18: the Responses API's function tool, flat.
    const responses = (await client.raw('GET', '/v1/sessions/defs-fresh/tools/definitions?format=openai-responses')).body as {
      tools: Record<string, unknown>[];
    };
    expect(responses.tools[0]).toEqual({
      type: 'function',
      name: 'exec',
      description: execDescription,
      parameters: expect.objectContaining({ type: 'object' }),
      strict: false,
    });
    const mcp = (await client.raw('GET', '/v1/sessions/defs-fresh/tools/definitions?format=mcp')).body as { tools: unknown[] };
    expect(ListToolsResultSchema.parse(mcp).tools.map((t) => t.name)).toEqual(['exec', 'wait']);
    expect((await client.raw('GET', '/v1/sessions/defs-fresh')).status).toBe(404);
  });

  test('an unknown or missing format is refused with the formats it takes', async () => {
    const client = tenants.stack.client(ALPHA);
    for (const query of ['?format=xml', '', '?format=']) {
      const answer = await client.raw('GET', `/v1/sessions/defs-fresh/tools/definitions${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        error: 'format must be one of openai, openai-responses, anthropic, mcp.',
        code: 'invalid_input',
      });
    }
  });
});

describe('codemode mcp (stdio, forwarding to the API)', () => {
  const tenants = twoTenants();
  /** The official SDK's stdio client, starting the CLI as a desktop MCP client would. */
  const spawnBridge = async (key: string, session: string): Promise<Client> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--session', session, '--url', tenants.stack.baseUrl, '--key', key],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e-stdio', version: '1.0.0' });
    tenants.clients.push(client);
    await client.connect(transport);
    return client;
  };

  test('lists the two tools, runs, parks and resumes a cell, and answers a failed one with isError', async () => {
    const client = await spawnBridge(ALPHA, 'desk');

    const { tools } = await client.listTools();
    const view = (await tenants.stack.client(ALPHA).raw('GET', '/v1/sessions/desk/tools')).body as { execDescription: string };
    // What /mcp lists, which the bridge forwards: the definitions, each an optional task (SPEC §14 Tasks).
    expect(tools).toEqual(
      toolDefinitions('mcp', codeModeTools(view.execDescription)).map((tool) => ({ ...tool, execution: { taskSupport: 'optional' } })),
    );

    const done = await client.callTool({ name: 'exec', arguments: { title: 'add', code: 'return 20 + 22' } });
    expect(done.isError).toBe(false);
    expect(structured(done)).toMatchObject({ status: 'completed', value: 42 });
    expect(done.content).toEqual([{ type: 'text', text: JSON.stringify(done.structuredContent) }]);

    const parked = structured(
      await client.callTool({ name: 'exec', arguments: { title: 'park', code: 'await yield_control(); return "resumed"' } }),
    );
    expect(parked).toMatchObject({ status: 'waiting', runId: expect.stringMatching(/^cm_/) });
    expect(structured(await client.callTool({ name: 'wait', arguments: { runId: parked.runId } }))).toMatchObject({
      status: 'completed',
      value: 'resumed',
    });

    const boom = await client.callTool({ name: 'exec', arguments: { title: 'boom', code: 'throw new TypeError("nope")' } });
    expect(boom.isError).toBe(true);
    expect(structured(boom)).toMatchObject({ status: 'failed', error: expect.stringContaining('TypeError: nope') });
    // The same session as over REST: its runs are in the log there.
    const events = (await tenants.stack.client(ALPHA).raw('GET', '/v1/sessions/desk/events')).body as { events: { type: string }[] };
    expect(events.events.filter((e) => e.type === 'run.completed')).toHaveLength(2);
  });

  test('passes task requests through unchanged: a cell as a task, polled and answered through the bridge', async () => {
    const client = await spawnBridge(ALPHA, 'desk-tasks');
    const kinds: string[] = [];
    let last: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'exec', arguments: { title: 'task', code: 'await new Promise(r => setTimeout(r, 200)); return "bridged"' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      kinds.push(message.type);
      if (message.type === 'result') last = message.result;
    }
    expect(kinds[0]).toBe('taskCreated');
    expect(structured(last)).toMatchObject({ status: 'completed', value: 'bridged' });
    expect((await client.experimental.tasks.listTasks()).tasks).toHaveLength(1);
  });

  test('the MCP Inspector CLI runs a cell through codemode mcp on stdio', async () => {
    const bridge = [process.execPath, CLI, 'mcp', '--session', 'desk-inspector', '--url', tenants.stack.baseUrl, '--key', ALPHA];
    const called = await inspect([...bridge, ...inspectorExec('return "via stdio"')]);
    expect(called).toMatchObject({ isError: false, structuredContent: { status: 'completed', value: 'via stdio' } });
  });

  test('another tenant’s bridge on the same session name sees none of it', async () => {
    const client = await spawnBridge(BETA, 'desk');
    const resumed = structured(await client.callTool({ name: 'exec', arguments: { title: 'look', code: 'return 1' } }));
    expect(resumed).toMatchObject({ status: 'completed', value: 1 });
    const events = (await tenants.stack.client(BETA).raw('GET', '/v1/sessions/desk/events')).body as { events: { type: string }[] };
    expect(events.events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.completed']);
  });

  test('a refused key fails the bridge at start, saying so on stderr', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--session', 'desk', '--url', tenants.stack.baseUrl, '--key', 'not-a-key'],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'e2e-stdio', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
    await client.close().catch(() => undefined);
    expect(stderr).toContain('codemode: HTTP 401: missing or unknown API key; send Authorization: Bearer <key>.');
  });

  test('tells its client when the session’s tools change', async () => {
    const client = await spawnBridge(ALPHA, 'desk-tools');
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    // The bridge forwards /mcp's notification stream, open once its remote transport has had time to make it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const put = await tenants.stack.client(ALPHA).raw('PUT', '/v1/sessions/desk-tools/tools', {
      body: JSON.stringify({ tools: [{ name: 'lookupOrder', description: 'Find an order.', inputSchema: { type: 'object' } }] }),
    });
    expect(put.status).toBe(200);
    await changed;
    expect((await client.listTools()).tools[0].description).toContain('lookupOrder');
  });
});

describe('/mcp notification streams under the tenant stream quota (SPEC §10)', () => {
  const tenants = twoTenants({ CODEMODE_TENANT_MAX_STREAMS: '2' });

  const openStream = (key: string, session: string, signal: AbortSignal) =>
    fetch(`${tenants.stack.baseUrl}/mcp`, {
      headers: {
        authorization: `Bearer ${key}`,
        accept: 'text/event-stream',
        'x-codemode-session': session,
        'mcp-protocol-version': '2025-06-18',
      },
      signal,
    });

  test('a tenant holding all its stream slots gets 429 for one more; another tenant still gets its own; a closed stream gives its slot back', async () => {
    const held = new AbortController();
    const streams = [await openStream(ALPHA, 'a1', held.signal), await openStream(ALPHA, 'a2', held.signal)];
    expect(streams.map((r) => r.status)).toEqual([200, 200]);
    expect(streams[0].headers.get('content-type')).toContain('text/event-stream');

    const refused = await openStream(ALPHA, 'a3', new AbortController().signal);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
      'tenant event stream quota reached (2 open at once); close a stream first.',
    );

    const other = new AbortController();
    const beta = await openStream(BETA, 'b1', other.signal);
    expect(beta.status).toBe(200);
    other.abort();

    held.abort();
    const deadline = Date.now() + 5_000;
    let again: Response;
    do {
      again = await openStream(ALPHA, 'a4', new AbortController().signal);
      if (again.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } while (Date.now() < deadline);
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });
});
