import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { CodeModeResult } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const FIXTURE_MCP = join(__dirname, '..', 'libs', 'tools', 'test-fixtures', 'fixture-mcp-server.js');
const SESSION = 'keys-1';

/** A webhook tool that records the Idempotency-Key and the body of every request it gets. */
function startRecorder(): Promise<{ server: Server; url: string; seen: { key: string | undefined; body: Record<string, unknown> }[] }> {
  const seen: { key: string | undefined; body: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      seen.push({ key: typeof key === 'string' ? key : undefined, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, seen });
    }),
  );
}

describe('callKey on every nested tool call (SPEC §16)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let hook: Awaited<ReturnType<typeof startRecorder>>;

  beforeAll(async () => {
    hook = await startRecorder();
    stack = await TestStack.start({
      env: { CODEMODE_MCP_SERVERS: JSON.stringify([{ name: 'tracker', command: process.execPath, args: [FIXTURE_MCP] }]) },
    });
    client = stack.client();
    const registered = await client.raw('PUT', `/v1/sessions/${SESSION}/tools`, {
      body: JSON.stringify({
        tools: [
          { name: 'record', description: 'Records the call key', endpoint: `${hook.url}/record` },
          { name: 'ask_human', description: 'Ask the human operator a question' },
          { name: 'upsert', description: 'Applies each key once', endpoint: `${hook.url}/upsert`, idempotent: true },
        ],
      }),
    });
    expect(registered.status).toBe(200);
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.server.close();
  });

  it('numbers webhook, MCP, shell and platform calls of a run together, across a park and its resume', async () => {
    const code = `
      const first = await record({ n: 1 });
      await catalog.search('record');
      const mcp = await MCP.tracker.echoMeta({});
      const shell = await exec({ command: 'echo "$CODEMODE_CALL_KEY"' });
      const answer = await ask_human({ question: 'go on?' });
      const last = await record({ n: 2 });
      return { first: first.key, mcp: mcp.content[0].text, shell: shell.details.aggregated, answer, last: last.key };`;
    const parked = await client.exec(SESSION, { title: 'keys', code });
    expect(parked).toMatchObject({ status: 'waiting', reason: 'pending_tools' });
    const { runId, pendingToolCalls } = parked as Extract<CodeModeResult, { status: 'waiting' }>;
    expect(pendingToolCalls).toEqual([{ id: 'bridge:callValue:3', method: 'callValue', tool: 'ask_human', input: { question: 'go on?' } }]);
    const ack = await client.raw('POST', `/v1/sessions/${SESSION}/runs/${runId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:3', ok: true, value: 'yes' }] }),
    });
    expect(ack.status).toBe(202);
    const done = await client.wait(SESSION, runId);
    expect(done).toMatchObject({
      status: 'completed',
      value: { first: `${runId}:1`, mcp: `${runId}:2`, shell: `${runId}:3`, answer: 'yes', last: `${runId}:5` },
    });
    // The body is what it always was: the key travels in the header only.
    expect(
      hook.seen.filter((request) => request.body.runId === runId).map((request) => [request.key, Object.keys(request.body).sort()]),
    ).toEqual([
      [`${runId}:1`, ['callId', 'input', 'runId', 'sessionId', 'tool']],
      [`${runId}:5`, ['callId', 'input', 'runId', 'sessionId', 'tool']],
    ]);
    const called = (await client.events(SESSION, { limit: 1000 })).events
      .filter((event) => event.runId === runId && event.type === 'tool.called')
      .map((event) => [event.data.callId, event.data.callKey]);
    expect(called).toEqual([
      ['bridge:callValue:1', `${runId}:1`],
      ['bridge:namespace:1', `${runId}:2`],
      ['bridge:callValue:2', `${runId}:3`],
      ['bridge:callValue:3', `${runId}:4`],
      ['bridge:callValue:4', `${runId}:5`],
    ]);
  });

  it('lets restartSafe cells call idempotent client and MCP tools, and nothing else that writes (SPEC §16)', async () => {
    const safe = await client.exec(SESSION, {
      title: 'safe writes',
      restartSafe: true,
      code: 'const a = await upsert({ id: 1 }); const b = await MCP.tracker.echoMeta({}); return [a.key, b.content[0].text];',
    });
    expect(safe).toMatchObject({ status: 'completed', replaySafe: true });
    const [webhookKey, mcpKey] = (safe as Extract<CodeModeResult, { status: 'completed' }>).value as string[];
    expect(webhookKey).toMatch(/^cm_[0-9a-f-]+:1$/);
    expect(mcpKey).toBe(`${webhookKey.slice(0, -2)}:2`);
    const write = await client.exec(SESSION, { title: 'unsafe write', restartSafe: true, code: 'await record({}); return 1;' });
    expect(write).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      replaySafe: true,
      error: 'restart-safe code mode cannot call tool surfaces that are not proven replay-safe; use audited read, grep, or find tools.',
    });
    const mcp = await client.exec(SESSION, {
      title: 'unsafe mcp',
      restartSafe: true,
      code: 'await MCP.tracker.createIssue({ title: "x" });',
    });
    expect(mcp).toMatchObject({ status: 'failed', code: 'invalid_input', error: 'restart-safe code mode cannot call namespace tools.' });
  });

  it('counts calls of each run from 1', async () => {
    const result = await client.exec(SESSION, { title: 'again', code: 'return (await record({})).key;' });
    expect(result.status).toBe('completed');
    const { value } = result as Extract<CodeModeResult, { status: 'completed' }>;
    expect(value).toMatch(/:1$/);
    expect(value).not.toBe(hook.seen[0].key);
  });
});
