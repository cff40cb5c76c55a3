import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeModeResult } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const FIXTURE_MCP = join(__dirname, '..', 'libs', 'tools', 'test-fixtures', 'fixture-mcp-server.js');

/** A platform's webhook tool endpoint: answers by path, counts calls. */
function startWebhooks(): Promise<{ server: Server; url: string; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls.push(`${req.url} ${body}`);
      const reply = (status: number, text: string, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(text);
      };
      if (req.url === '/weather')
        return reply(200, JSON.stringify({ city: (JSON.parse(body) as { input: { city: string } }).input.city, tempC: 21 }));
      if (req.url === '/broken') return reply(500, JSON.stringify({ error: 'database is down' }));
      if (req.url === '/garbage') return reply(200, 'not json', 'text/plain');
      if (req.url === '/slow') return void setTimeout(() => reply(200, '{}'), 3000);
      reply(404, 'no such tool', 'text/plain');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, calls });
    }),
  );
}

describe('tools in cells (core, webhook, platform, MCP) and the stores', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let hooks: Awaited<ReturnType<typeof startWebhooks>>;

  beforeAll(async () => {
    hooks = await startWebhooks();
    stack = await TestStack.start({
      env: { CODEMODE_MCP_SERVERS: JSON.stringify([{ name: 'tracker', command: process.execPath, args: [FIXTURE_MCP] }]) },
    });
    client = stack.client();
    await client.raw('PUT', '/v1/sessions/tools-1/tools', {
      body: JSON.stringify({
        tools: [
          {
            name: 'get_weather',
            description: 'Current weather for a city',
            inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
            endpoint: `${hooks.url}/weather`,
          },
          { name: 'broken_tool', description: 'Always fails', endpoint: `${hooks.url}/broken` },
          { name: 'garbage_tool', description: 'Answers garbage', endpoint: `${hooks.url}/garbage` },
          { name: 'slow_tool', description: 'Too slow', endpoint: `${hooks.url}/slow`, timeoutMs: 300 },
          { name: 'ask_human', description: 'Ask the human operator a question' },
        ],
      }),
    });
  });
  afterAll(async () => {
    await stack?.stop();
    hooks?.server.close();
  });

  it('lists the catalog and the exec description', async () => {
    const res = await client.raw('GET', '/v1/sessions/tools-1/tools');
    expect(res.status).toBe(200);
    const view = res.body as { catalog: { callableName: string; source: string }[]; execDescription: string };
    const names = view.catalog.map((t) => t.callableName);
    expect(names.slice(0, 5)).toEqual(['read', 'ls', 'find', 'grep', 'exec']);
    expect(names.some((n) => /^process_[0-9a-f]{8}$/.test(n))).toBe(true);
    expect(names).toEqual(expect.arrayContaining(['get_weather', 'ask_human']));
    expect(view.execDescription).toContain('Enabled async tool globals (descriptions are intentionally deferred):');
    expect(view.execDescription).not.toContain(hooks.url);
    expect(view.execDescription).not.toContain('Current weather');
  });

  it('serves a large registration (past the body-thread and bulk-connection sizes) as a small one, and each new version to the next cell', async () => {
    // ~1 MB: parsed on a body thread, its view answered as bytes, the list written on the ledger's
    // own connection, and read by the worker one tool at a time.
    const tools = (description: string) =>
      Array.from({ length: 120 }, (_, i) => ({
        name: `big_${i}`,
        description: `${description} ${'x'.repeat(8000)}`,
        inputSchema: { type: 'object', properties: { [`field_${i}`]: { type: 'string', description: 'y'.repeat(200) } } },
        endpoint: `${hooks.url}/weather`,
      }));
    const put = async (description: string) =>
      client.raw('PUT', '/v1/sessions/tools-big/tools', {
        body: JSON.stringify({ tools: tools(description) }),
        headers: { 'content-type': 'application/json' },
      });
    const first = await put('First version.');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    const got = await client.raw('GET', '/v1/sessions/tools-big/tools');
    expect(got.headers.get('content-type')).toMatch(/^application\/json/);
    expect(first.body).toEqual(got.body);
    const names = (got.body as { catalog: { callableName: string }[] }).catalog.map((t) => t.callableName);
    expect(names).toEqual(expect.arrayContaining(['big_0', 'big_119']));

    const probe = {
      title: 'probe',
      code: `const d = await big_7.describe(); const hits = await catalog.search("big_7"); const file = await API.read("tools/big_7.d.ts");
        return { version: d.description.split(" ")[0], params: Object.keys(d.parameters.properties), hit: hits[0]?.callableName, declared: file.content.includes("field_7") };`,
    };
    expect(await client.exec('tools-big', probe)).toMatchObject({
      status: 'completed',
      value: { version: 'First', params: ['field_7'], hit: 'big_7', declared: true },
    });
    // The same list registered again is a new version: the next cell sees what it says now.
    expect((await put('Second version.')).status).toBe(200);
    expect(await client.exec('tools-big', probe)).toMatchObject({ status: 'completed', value: { version: 'Second' } });
    expect(await client.exec('tools-big', { title: 'call', code: 'return (await big_3({ city: "Oslo" })).city' })).toMatchObject({
      status: 'completed',
      value: 'Oslo',
    });
  });

  it('refuses bad tool registrations with 400 naming the field', async () => {
    const res = await client.raw('PUT', '/v1/sessions/tools-1b/tools', {
      body: JSON.stringify({ tools: [{ name: 'x', description: 'd', endpoint: 'ftp://nope' }] }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_input', details: { field: 'tools.0.endpoint' } });
  });

  it('calls a webhook tool, a platform tool, a core tool and an MCP tool in one cell, recorded in order', async () => {
    const workspace = join(stack.workspaceRoot, 'default', 'tools-1');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'notes.txt'), 'alpha\nbeta\n');
    const code = `
      const w = await get_weather({ city: 'Oslo' });
      const file = await read({ path: 'notes.txt' });
      const issue = await MCP.tracker.createIssue({ title: 'Bug' });
      const answer = await ask_human({ question: 'ok?' });
      return { w, lines: file.content.split('\\n').filter(Boolean), issue: issue.structuredContent, answer };`;
    const first = await client.exec('tools-1', { title: 'all tools', code });
    expect(first).toMatchObject({ status: 'waiting', reason: 'pending_tools' });
    const waiting = first as Extract<CodeModeResult, { status: 'waiting' }>;
    expect(waiting.pendingToolCalls).toEqual([
      { id: 'bridge:callValue:3', method: 'callValue', tool: 'ask_human', input: { question: 'ok?' } },
    ]);
    const ack = await client.raw('POST', `/v1/sessions/tools-1/runs/${waiting.runId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:3', ok: true, value: 'yes' }] }),
    });
    expect(ack.status).toBe(202);
    const done = await client.wait('tools-1', waiting.runId);
    expect(done).toMatchObject({
      status: 'completed',
      value: {
        w: { city: 'Oslo', tempC: 21 },
        lines: ['alpha', 'beta'],
        issue: expect.objectContaining({ title: 'Bug', priority: 'normal' }),
        answer: 'yes',
      },
    });
    expect(done.telemetry.callCount).toBe(4);
    const calls = (await client.events('tools-1', { limit: 1000 })).events
      .filter((e) => e.runId === waiting.runId && e.type.startsWith('tool.'))
      .map((e) => `${e.type} ${String(e.data.callId)}`);
    expect(calls).toEqual([
      'tool.called bridge:callValue:1',
      'tool.settled bridge:callValue:1',
      'tool.called bridge:callValue:2',
      'tool.settled bridge:callValue:2',
      'tool.called bridge:namespace:1',
      'tool.settled bridge:namespace:1',
      'tool.called bridge:callValue:3',
      'tool.settled bridge:callValue:3',
    ]);
  });

  it('records a core read once it answered and a webhook call before its endpoint sees it, with the data each always had', async () => {
    const sid = 'tools-order';
    mkdirSync(join(stack.workspaceRoot, 'default', sid), { recursive: true });
    // The endpoint looks in the event feed for the call's tool.called (by its callKey) before it answers.
    const audit = createServer((req, res) => {
      const key = String(req.headers['idempotency-key']);
      req.resume();
      req.on('end', () => {
        void client.events(sid, { limit: 1000 }).then(({ events }) => {
          const calledBefore = events.some((e) => e.type === 'tool.called' && e.data.callKey === key);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ calledBefore }));
        });
      });
    });
    await new Promise<void>((resolve) => audit.listen(0, '127.0.0.1', resolve));
    try {
      const address = audit.address();
      const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/audit`;
      await client.putTools(sid, [{ name: 'audit', description: 'a write that audits the log', endpoint }]);
      const result = await client.exec(sid, {
        title: 'ls then write',
        code: 'const l = await ls({}); return [l.entries, await audit({ n: 1 })];',
      });
      expect(result).toMatchObject({ status: 'completed', value: [[], { calledBefore: true }] });
      const feed = (await client.events(sid, { limit: 1000 })).events;
      const runId = feed.find((e) => e.type === 'run.requested')?.runId;
      const events = feed.filter((e) => e.runId === runId && e.type.startsWith('tool.'));
      expect(events.map((e) => [e.type, e.data.callId])).toEqual([
        ['tool.called', 'bridge:callValue:1'],
        ['tool.settled', 'bridge:callValue:1'],
        ['tool.called', 'bridge:callValue:2'],
        ['tool.settled', 'bridge:callValue:2'],
      ]);
      expect(events[0].data).toEqual({
        callId: 'bridge:callValue:1',
        tool: 'ls',
        source: 'openclaw',
        inputBytes: 2,
        callKey: `${runId}:1`,
      });
      expect(events[1].data).toEqual({
        callId: 'bridge:callValue:1',
        tool: 'ls',
        durationMs: expect.any(Number),
        ok: true,
        resultBytes: expect.any(Number),
      });
      expect(events[2].data).toEqual({
        callId: 'bridge:callValue:2',
        tool: 'audit',
        source: 'client',
        inputBytes: 7,
        callKey: `${runId}:2`,
      });
      expect(events[3].data).toMatchObject({ callId: 'bridge:callValue:2', tool: 'audit', ok: true });
    } finally {
      audit.close();
    }
  });

  it('turns webhook failures into catchable errors with clear messages', async () => {
    const result = await client.exec('tools-1', {
      title: 'failures',
      code: `
        const out = [];
        for (const f of [broken_tool, garbage_tool, slow_tool]) {
          try { await f({}); out.push('no error'); } catch (e) { out.push(e.message); }
        }
        return out;`,
    });
    expect(result.status).toBe('completed');
    const messages = (result as { value: string[] }).value;
    expect(messages[0]).toBe('database is down');
    expect(messages[1]).toMatch(/invalid JSON/);
    expect(messages[2]).toBe('tool slow_tool did not answer within 300 ms.');
    expect((await client.exec('tools-1', { title: 'after', code: 'return 1' })).status).toBe('completed');
  });

  it('searches the catalog and serializes handles to metadata', async () => {
    const result = await client.exec('tools-1', {
      title: 'search',
      code: "const hits = await catalog.search('weather city'); return hits[0];",
    });
    expect(result).toMatchObject({
      status: 'completed',
      value: { callableName: 'get_weather', toolName: 'get_weather', source: 'client' },
    });
  });

  it('commits store writes only when the cell completes, and serves them over REST', async () => {
    expect(
      await client.exec('tools-1', { title: 's', code: "await store('a', {n: 1}); await store('b', null); return await load('a');" }),
    ).toMatchObject({ value: { n: 1 } });
    expect(await client.exec('tools-1', { title: 's', code: "await store('c', 3); throw new Error('boom');" })).toMatchObject({
      status: 'failed',
    });
    const res = await client.raw('GET', '/v1/sessions/tools-1/store');
    expect(res.body).toEqual({ values: { a: { n: 1 }, b: null } });
    const bad = await client.exec('tools-1', {
      title: 's',
      code: "try { await store('', 1) } catch (e) { return [e instanceof TypeError, e.message] }",
    });
    expect(bad).toMatchObject({ value: [true, 'Code Mode store key must be a non-empty string of at most 256 characters.'] });
    expect((await client.raw('GET', '/v1/sessions/never-made/store')).status).toBe(404);
    const concurrent = await client.exec('tools-2', {
      title: 's',
      code: "await Promise.all([store('x1', 1), store('x2', 2), store('x3', 3)]); return await load('x2');",
    });
    expect(concurrent).toMatchObject({ status: 'completed', value: 2 });
    expect((await client.raw('GET', '/v1/sessions/tools-2/store')).body).toEqual({ values: { x1: 1, x2: 2, x3: 3 } });
  });

  it('saves oversized final arrays as results references readable by a later cell', async () => {
    await client.putSession('big', { codeMode: { maxOutputBytes: 2048 } });
    const first = await client.exec('big', { title: 'big', code: 'return Array.from({length: 500}, (_, i) => ({ i }));' });
    expect(first).toMatchObject({
      status: 'completed',
      value: { truncated: true, reference: { id: expect.stringMatching(/^result_/), count: 500 } },
    });
    const id = (first as { value: { reference: { id: string } } }).value.reference.id;
    const second = await client.exec('big', {
      title: 'load',
      code: `const v = await results.load(${JSON.stringify(id)}); return v.length;`,
    });
    expect(second).toMatchObject({ status: 'completed', value: 500 });
  });

  it('refuses non-replay-safe tools in restartSafe cells, even inside try/catch', async () => {
    const result = await client.exec('tools-1', {
      title: 'rs',
      code: 'try { await get_weather({ city: "x" }) } catch (e) {} return 1;',
      restartSafe: true,
    });
    expect(result).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      replaySafe: true,
      error: 'restart-safe code mode cannot call tool surfaces that are not proven replay-safe; use audited read, grep, or find tools.',
    });
    const mcp = await client.exec('tools-1', {
      title: 'rs',
      code: 'await MCP.tracker.createIssue({ title: "x" }); return 1;',
      restartSafe: true,
    });
    expect(mcp).toMatchObject({ status: 'failed', error: 'restart-safe code mode cannot call namespace tools.' });
    expect(
      await client.exec('tools-1', { title: 'rs', code: 'const r = await ls({}); return Array.isArray(r.entries);', restartSafe: true }),
    ).toMatchObject({ status: 'completed', value: true });
  });

  it('runs the shell tool from inside a cell', async () => {
    const result = await client.exec('tools-1', {
      title: 'sh',
      code: "const r = await exec({ command: 'echo from-cell' }); return r.details.aggregated;",
    });
    expect(result).toMatchObject({ status: 'completed', value: 'from-cell' });
  });
});
