import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeErrors, type CodeModeResult, type Event, type NodeView } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(120_000);

/**
 * SPEC §17 "Liveness": every nested call the service makes has its own deadline (a webhook tool's
 * `timeoutMs`, an MCP server's `timeoutMs`, `CODEMODE_NODE_INVOKE_TIMEOUT_MS`), past which the
 * guest's promise rejects with the exact sentence and the run goes on, parked or not; and a
 * session whose runs wait on such calls, an approval or a platform answer still takes new execs.
 */
const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist/libs/client/src/cli/main.js');
const FIXTURE_MCP = join(ROOT, 'libs', 'tools', 'test-fixtures', 'fixture-mcp-server.js');
const KEY = 'deadlines-operator-key';
const TENANT = 'acme';
const NODE_DEADLINE_MS = 1_000;
const CATCHING = (call: string) => `try { await ${call}; return 'answered'; } catch (e) { return e.message; }`;

/** A loopback webhook endpoint that accepts every request and never answers it. */
async function startSilentWebhook(): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer(() => (requests += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function waitingOf(result: CodeModeResult): Extract<CodeModeResult, { status: 'waiting' }> {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result;
}

describe('every nested call has its own deadline, and nothing wedges a session (SPEC §17)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let hook: Awaited<ReturnType<typeof startSilentWebhook>>;
  let root: string;
  let node: ChildProcess | undefined;

  /** The `tool.settled` data of the session's runs, in log order. */
  const settledOf = async (sid: string): Promise<Event['data'][]> =>
    (await client.events(sid, { limit: 1000 })).events.filter((e) => e.type === 'tool.settled').map((e) => e.data);
  const registerTools = async (sid: string, tools: unknown[]): Promise<void> => {
    const res = await client.raw('PUT', `/v1/sessions/${sid}/tools`, {
      body: JSON.stringify({ tools }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    hook = await startSilentWebhook();
    root = mkdtempSync(join(tmpdir(), 'codemode-deadlines-'));
    stack = await TestStack.start({
      apiKeys: `${KEY}:${TENANT}`,
      env: {
        CODEMODE_WEBHOOK_ALLOW: '127.0.0.1',
        CODEMODE_NODE_INVOKE_TIMEOUT_MS: String(NODE_DEADLINE_MS),
        CODEMODE_MCP_SERVERS: JSON.stringify([{ name: 'tracker', command: process.execPath, args: [FIXTURE_MCP], timeoutMs: 500 }]),
      },
    });
    client = stack.client(KEY);
  });

  afterAll(async () => {
    if (node && node.exitCode === null && node.signalCode === null) {
      const exited = new Promise((resolve) => node!.once('exit', resolve));
      node.kill('SIGINT');
      await exited;
    }
    await stack?.stop();
    hook?.server.closeAllConnections();
    hook?.server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("rejects a webhook tool's call past its timeoutMs with the exact sentence, settled as failed, and the run goes on", async () => {
    const sid = 'deadline-webhook';
    await registerTools(sid, [{ name: 'stalls', description: 'Never answers.', endpoint: `${hook.url}/never`, timeoutMs: 500 }]);
    const started = Date.now();
    const result = await client.exec(sid, {
      title: 'stalls',
      code: `const m = await (async () => { ${CATCHING('stalls({})')} })(); return [m, 1 + 1];`,
    });
    expect(result).toMatchObject({ status: 'completed', value: ['tool stalls did not answer within 500 ms.', 2] });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await settledOf(sid)).toEqual([
      expect.objectContaining({ tool: 'stalls', ok: false, error: 'tool stalls did not answer within 500 ms.' }),
    ]);
  });

  it("resumes a run parked on a webhook call to the call's failure on the next wait, in its catch or as the cell's failure", async () => {
    const sid = 'deadline-parked';
    await client.putSession(sid, { codeMode: { timeoutMs: 500 } });
    await registerTools(sid, [
      { name: 'stalls_long', description: 'Never answers.', endpoint: `${hook.url}/never-long`, timeoutMs: 2_500 },
    ]);
    const caught = waitingOf(await client.exec(sid, { title: 'caught', code: CATCHING('stalls_long({})') }));
    const uncaught = waitingOf(await client.exec(sid, { title: 'uncaught', code: 'return await stalls_long({});' }));
    expect(caught.reason).toBe('pending_tools');
    // Past the call's deadline (2.5 s from its start), well before any snapshot TTL.
    await until('both calls settled', async () => ((await settledOf(sid)).length === 2 ? true : undefined));
    expect(await client.wait(sid, caught.runId)).toMatchObject({
      status: 'completed',
      value: 'tool stalls_long did not answer within 2500 ms.',
    });
    expect(await client.wait(sid, uncaught.runId)).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('tool stalls_long did not answer within 2500 ms.') as unknown,
    });
  });

  it("rejects an MCP tools/call past its server's timeoutMs with the exact sentence, naming MCP.<server>.<callable>", async () => {
    const sid = 'deadline-mcp';
    const started = Date.now();
    const result = await client.exec(sid, { title: 'mcp', code: CATCHING('MCP.tracker.slow({ ms: 600000 })') });
    expect(result).toMatchObject({ status: 'completed', value: 'tool MCP.tracker.slow did not answer within 500 ms.' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await settledOf(sid)).toEqual([
      expect.objectContaining({ tool: 'MCP.tracker.slow', ok: false, error: 'tool MCP.tracker.slow did not answer within 500 ms.' }),
    ]);
    // The server is still usable: the deadline gave up on one call, not on the connection.
    expect(
      await client.exec(sid, { title: 'after', code: "return (await MCP.tracker.createIssue({ title: 'x' })).structuredContent.title;" }),
    ).toMatchObject({ status: 'completed', value: 'x' });
  });

  it('rejects a nodes.invoke the node never answers after CODEMODE_NODE_INVOKE_TIMEOUT_MS, with the node sentence', async () => {
    // The command's grandchild, in a session of its own, outlives the node's kill of the command's
    // process group and keeps its stdout open: the node never answers.
    const script = join(root, 'never-answers.sh');
    writeFileSync(script, '#!/bin/sh\nsetsid sleep 30\n');
    chmodSync(script, 0o755);
    node = spawn(
      process.execPath,
      [CLI, 'node', '--url', stack.baseUrl, '--key', KEY, '--name', 'mute', '--command', `never.answer=${script}`],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    );
    await until('the node connected', async () => {
      const listed = ((await client.raw('GET', '/v1/nodes')).body as { nodes: NodeView[] }).nodes;
      return listed.find((n) => n.name === 'mute' && n.connected);
    });
    const sid = 'deadline-node';
    const started = Date.now();
    const result = await client.exec(sid, { title: 'node', code: CATCHING("(await nodes.get('mute')).invoke('never.answer', {})") });
    expect(result).toMatchObject({ status: 'completed', value: nodeErrors.timedOut('mute', 'never.answer', NODE_DEADLINE_MS) });
    expect(nodeErrors.timedOut('mute', 'never.answer', NODE_DEADLINE_MS)).toBe('node mute did not answer never.answer within 1000 ms.');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await settledOf(sid)).toEqual([
      expect.objectContaining({ tool: 'nodes.get', ok: true }),
      expect.objectContaining({ tool: 'nodes.invoke', ok: false, error: 'node mute did not answer never.answer within 1000 ms.' }),
    ]);
  });

  it('takes new execs at once, and answers a wait on another run, while runs of the session wait on a silent tool, an approval and the platform', async () => {
    const sid = 'deadline-admission';
    mkdirSync(join(stack.workspaceRoot, TENANT, sid), { recursive: true });
    const put = await client.raw('PUT', `/v1/sessions/${sid}`, {
      body: JSON.stringify({ codeMode: { timeoutMs: 1_000 }, policy: { rules: [{ tool: 'ls', decision: 'approve' }] } }),
      headers: { 'content-type': 'application/json' },
    });
    expect(put.status).toBe(200);
    await registerTools(sid, [
      { name: 'silent', description: 'Never answers.', endpoint: `${hook.url}/silent`, timeoutMs: 300_000 },
      { name: 'ask_human', description: 'The platform answers.' },
    ]);
    const heardBefore = hook.requests();

    const onTool = waitingOf(await client.exec(sid, { title: 'silent', code: 'return await silent({});' }));
    await until('the silent webhook reached', async () => (hook.requests() > heardBefore ? true : undefined));
    const onApproval = client.exec(sid, { title: 'approval', code: CATCHING('ls({})') });
    const pendingApproval = await until('the approval pending', async () => {
      const approvals = ((await client.raw('GET', `/v1/sessions/${sid}/approvals`)).body as { approvals: { approvalId: string }[] })
        .approvals;
      return approvals[0];
    });
    const onPlatform = waitingOf(await client.exec(sid, { title: 'platform', code: "return await ask_human({ question: 'ok?' });" }));
    const [asked] = onPlatform.pendingToolCalls ?? [];
    expect(asked).toMatchObject({ method: 'callValue', tool: 'ask_human' });

    for (let i = 0; i < 3; i += 1) {
      const started = Date.now();
      expect(await client.exec(sid, { title: `fresh ${i}`, code: `return ${i} * 2;` })).toMatchObject({
        status: 'completed',
        value: i * 2,
      });
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    const started = Date.now();
    await client.toolResults(sid, onPlatform.runId, [{ id: asked.id, ok: true, value: 'yes' }]);
    expect(await client.wait(sid, onPlatform.runId)).toMatchObject({ status: 'completed', value: 'yes' });
    expect(Date.now() - started).toBeLessThan(10_000);

    const decided = await client.raw('POST', `/v1/sessions/${sid}/approvals/${pendingApproval.approvalId}`, {
      body: JSON.stringify({ decision: 'deny' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(decided.status).toBe(200);
    expect(await onApproval).toMatchObject({ status: 'completed', value: 'code mode tool ls was denied: no reason given' });
    expect(await client.abort(sid, onTool.runId)).toMatchObject({ status: 'failed' });
  });
});
