import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeErrors, type NodeView, type ShellAnswer } from '@codemode/contracts';
import type { CodeModeResult } from '@codemode/contracts';
import { decide, eventsOf, pendingApprovals } from './approvals/approval-helpers';
import { TestStack } from './utils/test-stack';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist/libs/client/src/cli/main.js');
const ALPHA = 'alpha-operator-key';
const ALPHA_AGENT = 'alpha-agent-key';
const BETA = 'beta-operator-key';

/** A real `codemode node` process, its stderr kept for the test's messages. */
class NodeProcess {
  output = '';
  private readonly exited: Promise<number | null>;

  constructor(
    readonly child: ChildProcess,
    readonly name: string,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** With `keyInEnv`, the key and URL are given as CODEMODE_API_KEY and CODEMODE_URL, as an operator's shell would. */
  static start(url: string, key: string, name: string, extra: string[] = [], keyInEnv = false): NodeProcess {
    const target = keyInEnv ? [] : ['--url', url, '--key', key];
    const child = spawn(process.execPath, [CLI, 'node', ...target, '--name', name, ...extra], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...(keyInEnv ? { CODEMODE_API_KEY: key, CODEMODE_URL: url, NODE_OPERATOR_SECRET: `secret-of-${name}` } : {}),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return new NodeProcess(child, name);
  }

  /** How many times it has (re)connected so far. */
  get connections(): number {
    return this.output.split('connected as ').length - 1;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
    return this.exited;
  }

  exit(): Promise<number | null> {
    return this.exited;
  }
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('paired nodes (SPEC §15) and shell on a node (SPEC §7)', () => {
  let stack: TestStack;
  let root: string;
  const nodes: NodeProcess[] = [];

  const start = (url: string, name: string, extra: string[] = [], key = ALPHA, keyInEnv = false) => {
    const node = NodeProcess.start(url, key, name, extra, keyInEnv);
    nodes.push(node);
    return node;
  };
  const listed = async (key = ALPHA): Promise<NodeView[]> =>
    ((await stack.client(key).raw('GET', '/v1/nodes')).body as { nodes: NodeView[] }).nodes;
  const connected = (name: string) => until(`${name} connected`, async () => (await listed()).find((n) => n.name === name && n.connected));
  const shell = async (body: Record<string, unknown>, key = ALPHA, baseUrl = stack.baseUrl): Promise<ShellAnswer> => {
    const response = await fetch(`${baseUrl}/v1/sessions/nodes-shell/shell/exec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as ShellAnswer;
  };

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `${ALPHA}:alpha,${ALPHA_AGENT}:alpha:agent,${BETA}:beta` });
    root = mkdtempSync(join(tmpdir(), 'codemode-node-root-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'a.md'), 'hello');
    symlinkSync('/etc', join(root, 'escape'));
  });

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await stack?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a node pairs with its tenant: listed connected with its commands, in the fleet view, and invisible to another tenant', async () => {
    start(stack.baseUrl, 'lab', ['--allow', 'system.run', '--root', root]);

    const node = await connected('lab');

    expect(node).toMatchObject({ name: 'lab', platform: process.platform, connected: true });
    expect(node.commands).toEqual(['device.status', 'fs.listDir', 'system.run']);
    expect(node.id).toMatch(/^nd_[0-9a-f-]{36}$/);
    expect(typeof node.connectedAt).toBe('string');
    expect(await listed(BETA)).toEqual([]);
    const fleet = (await stack.client(ALPHA).raw('GET', '/v1/fleet')).body as { nodes: NodeView[] };
    expect(fleet.nodes.map((n) => n.name)).toContain('lab');
    expect(((await stack.client(BETA).raw('GET', '/v1/fleet')).body as { nodes: NodeView[] }).nodes).toEqual([]);
  });

  test('shell exec with host "node" runs on the node, by name or id, with its exit code', async () => {
    const node = await connected('lab');

    const byName = await shell({ command: 'printf "on the node: %s" "$(pwd)"; exit 3', host: 'node', node: 'lab' });
    expect(byName.text).toBe(`on the node: ${root}\n\n(Command exited with code 3)`);
    expect(byName.details).toMatchObject({ status: 'failed', exitCode: 3, cwd: root });

    const byId = await shell({ command: 'echo ok', host: 'node', node: node.id });
    expect(byId).toMatchObject({ text: 'ok', details: { status: 'completed', exitCode: 0 } });
  });

  test('a command run on a node through host "node" sees none of the node\'s own variables: an agent key cannot read its operator key', async () => {
    start(stack.baseUrl, 'keyed', ['--allow', 'system.run', '--root', root], ALPHA, true);
    await connected('keyed');

    const answer = await shell(
      { command: 'env; echo "key=[$CODEMODE_API_KEY]"', host: 'node', node: 'keyed', env: { GIVEN: 'by-call' } },
      ALPHA_AGENT,
    );

    expect(answer.details).toMatchObject({ status: 'completed', exitCode: 0 });
    const dump = (answer.details as { aggregated: string }).aggregated;
    expect(dump).toContain('key=[]');
    expect(dump).not.toContain(ALPHA);
    expect(dump).not.toContain('secret-of-keyed');
    expect(dump.match(/CODEMODE_[A-Z0-9_]*(?==)/g) ?? []).toEqual([]);
    expect(dump).toContain('GIVEN=by-call');
    expect(dump).toContain(`PATH=${process.env.PATH ?? ''}`);
  });

  test('shell on a node: unknown node, another tenant, background, a yield it outlives, a node without system.run, elevated', async () => {
    await connected('lab');
    start(stack.baseUrl, 'plain');
    await connected('plain');

    expect((await shell({ command: 'true', host: 'node', node: 'nowhere' })).text).toBe(nodeErrors.unknown('nowhere'));
    expect((await shell({ command: 'true', host: 'node', node: 'lab' }, BETA)).text).toBe(nodeErrors.unknown('lab'));
    expect((await shell({ command: 'true', host: 'node', node: 'lab', background: true })).text).toBe(nodeErrors.background);
    const outlived = await shell({ command: 'sleep 5', host: 'node', node: 'lab', yieldMs: 300 });
    expect(outlived).toEqual({ text: nodeErrors.background, details: { status: 'failed' } });
    expect((await shell({ command: 'true', host: 'node', node: 'plain' })).text).toBe(nodeErrors.noCommand('plain', 'system.run'));
    expect((await shell({ command: 'true', host: 'node', node: 'lab', elevated: true })).text).toBe(
      'elevated exec is not available in this service.',
    );
  });

  test('an invocation reaches the node through another API instance than the one holding its connection', async () => {
    const other = await stack.addApi();
    start(other.baseUrl, 'remote', ['--allow', 'system.run', '--root', root]);
    await connected('remote');

    // Asked through the stack's API; the connection is held by the other one.
    const answer = await shell({ command: 'echo across', host: 'node', node: 'remote' });

    expect(answer).toMatchObject({ text: 'across', details: { status: 'completed' } });
  });

  test('a node whose API dies reconnects as itself, and a command in flight meanwhile still answers', async () => {
    const other = await stack.addApi();
    const node = start(other.baseUrl, 'flighty', ['--allow', 'system.run', '--root', root]);
    const before = await connected('flighty');

    const pending = shell({ command: 'sleep 1; echo survived', host: 'node', node: 'flighty', yieldMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    await other.api.kill();
    // Its answer goes to the node's API: another one on the same port stands in (a restarted replica).
    const replacement = await stack.addApi(other.baseUrl);

    expect(await pending).toMatchObject({ text: 'survived', details: { status: 'completed' } });
    const after = await until('flighty back', async () => (node.connections >= 2 ? connected('flighty') : undefined));
    expect(after.id).toBe(before.id);
    await replacement.api.stop();
  });

  test('DELETE /v1/nodes/{id}: agent keys refused; an operator removes it, and the node process stops', async () => {
    const node = start(stack.baseUrl, 'doomed');
    const { id } = await connected('doomed');

    const agent = await stack.client(ALPHA_AGENT).raw('DELETE', `/v1/nodes/${id}`);
    expect(agent.status).toBe(403);
    expect(await stack.client(BETA).raw('DELETE', `/v1/nodes/${id}`)).toMatchObject({ status: 404 });

    const removed = await stack.client(ALPHA).raw('DELETE', `/v1/nodes/${id}`);

    expect(removed).toMatchObject({ status: 200, body: { id, deleted: true } });
    expect(await node.exit()).toBe(0);
    expect(node.output).toContain('was removed');
    expect((await listed()).find((n) => n.id === id)).toBeUndefined();
    expect((await stack.client(ALPHA).raw('DELETE', `/v1/nodes/${id}`)).status).toBe(404);
  });

  test("a second connection cannot take a connected node without its secret, nor an agent key an operator's node; bad pairings are 400s", async () => {
    await connected('lab');
    const client = stack.client(ALPHA);
    const post = (body: unknown) =>
      client.raw('POST', '/v1/nodes/connect', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

    const taken = await post({ name: 'lab', platform: 'linux', commands: [] });
    expect(taken.status).toBe(409);
    expect((taken.body as { error: string }).error).toBe(
      'node lab is already connected; reconnect with its id and secret, or remove it first.',
    );
    const operatorNode = start(stack.baseUrl, 'operators-node');
    await connected('operators-node');
    await operatorNode.stop();
    await until('operators-node gone', async () =>
      (await listed()).find((n) => n.name === 'operators-node')?.connected === false ? true : undefined,
    );
    const hijack = await stack.client(ALPHA_AGENT).raw('POST', '/v1/nodes/connect', {
      body: JSON.stringify({ name: 'operators-node', platform: 'linux', commands: [] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(hijack.status).toBe(403);
    expect((hijack.body as { error: string }).error).toBe(
      'node operators-node was paired with an operator key; an agent key cannot take it over.',
    );
    const bad = await post({ name: ' lab', platform: 'linux', commands: ['ok', 'not ok'] });
    expect(bad.status).toBe(400);
    expect((bad.body as { code: string }).code).toBe('invalid_input');
    const answer = await client.raw('POST', '/v1/nodes/nd_00000000-0000-0000-0000-000000000000/results', {
      body: JSON.stringify({ invocationId: 'x', ok: true }),
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(409);
  });

  const exec = (sid: string, code: string, key = ALPHA): Promise<CodeModeResult> => stack.client(key).exec(sid, { title: 'nodes', code });

  test('a cell lists nodes, gets one by id and by name, invokes device.status and listDir; tool.called carries node and command', async () => {
    const lab = await connected('lab');

    const result = await exec(
      'nodes-cell',
      `const all = await nodes.list();
       const byName = await nodes.get('lab');
       const byId = await nodes.get(${JSON.stringify(lab.id)});
       const status = await byName.invoke('device.status');
       const docs = await byId.listDir('docs');
       return { names: all.map((n) => n.name), ids: [byName.id, byId.name], keys: Object.keys(byName), status, docs,
                hasExec: 'exec' in byName };`,
    );

    expect(result).toMatchObject({ status: 'completed' });
    const value = (result as { value: Record<string, unknown> }).value;
    expect(value.names).toContain('lab');
    expect(value.ids).toEqual([lab.id, 'lab']);
    expect(value.keys).toEqual(['id', 'name']);
    expect(value.status).toMatchObject({ platform: process.platform, uptimeSeconds: expect.any(Number) });
    expect(value.docs).toEqual({ path: 'docs', entries: [{ name: 'a.md', type: 'file', size: 5 }] });
    expect(value.hasExec).toBe(false);
    const called = (await eventsOf(stack.client(ALPHA), 'nodes-cell')).filter((e) => e.type === 'tool.called').map((e) => e.data);
    expect(called).toEqual([
      expect.objectContaining({ tool: 'nodes.list', source: 'platform' }),
      expect.objectContaining({ tool: 'nodes.get' }),
      expect.objectContaining({ tool: 'nodes.get' }),
      expect.objectContaining({ tool: 'nodes.invoke', node: lab.id, command: 'device.status' }),
      expect.objectContaining({ tool: 'nodes.invoke', node: lab.id, command: 'fs.listDir' }),
    ]);
  });

  test("a cell's node errors: unknown node, unknown command, outside the root, system.run on a handle, another tenant's node", async () => {
    await connected('lab');
    const reject = (expr: string) => `try { await ${expr}; return 'resolved'; } catch (e) { return e.message; }`;

    const messages = await Promise.all([
      exec('nodes-err', reject("nodes.get('nowhere')")),
      exec('nodes-err', reject("(await nodes.get('lab')).invoke('camera.snap')")),
      exec('nodes-err', reject("(await nodes.get('lab')).listDir('../..')")),
      exec('nodes-err', reject("(await nodes.get('lab')).invoke('system.run', { command: 'id' })")),
      exec('nodes-err', reject("nodes.get('lab')"), BETA),
      exec('nodes-err', 'return await nodes.list();', BETA),
    ]);

    expect(messages.map((r) => (r as { value: unknown }).value)).toEqual([
      nodeErrors.unknown('nowhere'),
      nodeErrors.noCommand('lab', 'camera.snap'),
      "path ../.. is outside the node's root.",
      'system.run is not invoked on a node handle; use the exec tool with host: "node".',
      nodeErrors.unknown('lab'),
      [],
    ]);
  });

  test('a node that disconnects is listed disconnected and its calls say so', async () => {
    const node = start(stack.baseUrl, 'brief');
    await connected('brief');
    await node.stop();

    await until('brief disconnected', async () =>
      (await listed()).find((n) => n.name === 'brief')?.connected === false ? true : undefined,
    );
    const result = await exec(
      'nodes-gone',
      "try { await (await nodes.get('brief')).invoke('device.status'); } catch (e) { return e.message; }",
    );

    expect(result).toMatchObject({ status: 'completed', value: nodeErrors.notConnected('brief') });
  });

  test('policy applies to nodes.invoke: deny rejects, approve waits for an operator', async () => {
    await connected('lab');
    const client = stack.client(ALPHA);
    const policy = (sid: string, decision: string) =>
      client.raw('PUT', `/v1/sessions/${sid}`, {
        body: JSON.stringify({ policy: { rules: [{ tool: 'nodes.invoke', decision }] } }),
        headers: { 'content-type': 'application/json' },
      });
    expect((await policy('nodes-deny', 'deny')).status).toBe(200);
    expect((await policy('nodes-approve', 'approve')).status).toBe(200);

    const denied = await exec(
      'nodes-deny',
      "try { await (await nodes.get('lab')).invoke('device.status'); } catch (e) { return e.message; }",
    );
    expect(denied).toMatchObject({ status: 'completed', value: 'code mode tool nodes.invoke is blocked by policy.' });

    const pending = exec('nodes-approve', "return (await (await nodes.get('lab')).invoke('device.status')).platform;");
    const [approval] = await pendingApprovals(client, 'nodes-approve');
    expect(approval).toMatchObject({
      tool: 'nodes.invoke',
      input: { node: expect.stringMatching(/^nd_/), command: 'device.status', params: {} },
    });
    expect((await decide(client, 'nodes-approve', approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await pending).toMatchObject({ status: 'completed', value: process.platform });
  });

  test('a --command is served with params on stdin and its JSON output as the result; a cell runs a shell command on a node', async () => {
    const script = join(root, 'echo-params.sh');
    writeFileSync(script, '#!/bin/sh\nread line\nprintf \'{"got":%s}\' "$line"\n');
    chmodSync(script, 0o755);
    start(stack.baseUrl, 'scripted', ['--command', `echo.params=${script}`]);
    const node = await connected('scripted');
    expect(node.commands).toEqual(['device.status', 'echo.params']);
    await connected('lab');

    const result = await exec(
      'nodes-cmd',
      `const echoed = await (await nodes.get('scripted')).invoke('echo.params', { n: 42 });
       const ran = await exec({ command: 'echo from-cell', host: 'node', node: 'lab' });
       return { echoed, ran: ran.text };`,
    );

    expect(result).toMatchObject({ status: 'completed', value: { echoed: { got: { n: 42 } }, ran: 'from-cell' } });
  });
});
