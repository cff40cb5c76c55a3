import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { platformSurfaces } from '@codemode/catalog';
import { HeaderVault, SessionToolCatalog, WebhookAddressPolicy, WebhookAllowList } from '@codemode/tools';
import { callOf, RUN, sessionCatalog } from '../testing/tool-call-fakes';
import { CANCELED_MESSAGE } from '../tool-call-error';
import type { ToolRun } from '../tool-run';
import { McpKind } from './mcp';
import { PlatformAnsweredKind } from './platform-answered';
import { PlatformSurfaceKind } from './platform-surface';
import { toolKinds } from './registry';
import { ShellKind } from './shell';
import { surfaceHandlers } from './surface-handlers';
import type { KindCall, ResolvedTool } from './tool-kind';
import { noSecretsKeyMessage, WebhookKind } from './webhook';
import { WorkspaceCoreKind } from './workspace-core';

const catalog = sessionCatalog();

function toolNamed(name: string, run: ToolRun = RUN, at: SessionToolCatalog = catalog): ResolvedTool {
  const entry = at.byCallableName(name, run) ?? at.entries.find((candidate) => candidate.callableName === name);
  if (!entry) throw new Error(`no tool ${name} in the test catalog`);
  return { entry, run, catalog: at };
}

function made(tool: ResolvedTool, input: unknown, more: Partial<KindCall> = {}): KindCall {
  return {
    ...tool,
    call: callOf('bridge:callValue:1', 'callValue', { tool: tool.entry.callableName, input }, 5),
    input,
    signal: new AbortController().signal,
    gate: undefined,
    callKey: 'run_1:5',
    budgetLeft: () => 1234,
    handedOver: false,
    ...more,
  };
}

const processName = catalog.coreCallable('process');
const noWebhooks = { addressPolicy: () => new WebhookAddressPolicy(new WebhookAllowList(), 'multi'), secretOf: () => undefined };

describe('the registry', () => {
  const kinds = toolKinds({
    shell: { workspaceOf: () => '/nowhere', exec: never, process: never },
    mcp: () => null,
    webhooks: noWebhooks,
    surfaces: {},
  });
  const owner = (tool: ResolvedTool) => kinds.find((kind) => kind.handles(tool))?.constructor.name;

  it('gives every tool of a session exactly the kind that owns it', () => {
    expect(owner(toolNamed('read'))).toBe('WorkspaceCoreKind');
    expect(owner(toolNamed('exec'))).toBe('ShellKind');
    expect(owner(toolNamed(processName))).toBe('ShellKind');
    expect(owner(toolNamed('refund'))).toBe('WebhookKind');
    expect(owner(toolNamed('ask_user'))).toBe('PlatformAnsweredKind');
    expect(owner(toolNamed('ask_user', { ...RUN, awaitResults: true }))).toBe('WebhookKind');
    expect(owner(toolNamed('skills.read'))).toBe('PlatformSurfaceKind');
    expect(owner(toolNamed('nodes.invoke'))).toBe('PlatformSurfaceKind');
    expect(owner(toolNamed('agents.run'))).toBe('PlatformAnsweredKind');
    expect(owner(toolNamed('agents.run', { ...RUN, awaitResults: true }))).toBe('PlatformAnsweredKind');
    // No MCP servers on this worker: no kind makes the call (the pipeline refuses it as unavailable).
    expect(owner(toolNamed('MCP.tracker.createIssue'))).toBeUndefined();
  });

  it('makes a fresh platform-answered kind per run (it keeps the run’s awaited calls)', () => {
    const again = toolKinds({
      shell: { workspaceOf: () => '', exec: never, process: never },
      mcp: () => null,
      webhooks: noWebhooks,
      surfaces: {},
    });
    expect(again[0]).not.toBe(kinds[0]);
  });
});

describe('WorkspaceCoreKind', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kind-'));
    writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\n');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reads the run's session workspace", async () => {
    const kind = new WorkspaceCoreKind({ workspaceOf: (ref) => (ref.sessionId === 'sess_1' ? root : '/elsewhere') });
    expect(kind.handles(toolNamed('read'))).toBe(true);
    expect(kind.handles(toolNamed('exec'))).toBe(false);
    expect(JSON.stringify(await kind.call(made(toolNamed('read'), { path: 'notes.txt' })))).toContain('second line');
  });
});

describe('ShellKind', () => {
  it("runs exec and process in the run's scope, within the leg, keyed by the call key", async () => {
    const calls: unknown[][] = [];
    const shell = {
      exec: (...args: unknown[]) => Promise.resolve({ text: `exec ${calls.push(['exec', ...args])}` }),
      process: (...args: unknown[]) => Promise.resolve({ text: `process ${calls.push(['process', ...args])}` }),
    } as unknown as ConstructorParameters<typeof ShellKind>[0];
    const kind = new ShellKind(shell);
    const run = { ...RUN, agentId: 'agent-7' };
    expect(kind.handles(toolNamed('read'))).toBe(false);
    await kind.call(made(toolNamed('exec', run), { command: 'ls' }));
    await kind.call(made(toolNamed(processName, run), { action: 'poll', sessionId: 'p1' }));
    expect(calls.map((call) => call[0])).toEqual(['exec', 'process']);
    expect(calls[0][1]).toEqual({
      ref: RUN.ref,
      scopeKey: expect.stringContaining('agent-7') as unknown,
      insideCell: { remainingBudgetMs: 1234, processCallable: processName, callKey: 'run_1:5' },
    });
    expect(calls[0][2]).toEqual({ command: 'ls' });
    expect(calls[0][3]).toBe(run.shell);
  });
});

describe('WebhookKind', () => {
  let server: Server;
  let seen: { headers: IncomingHttpHeaders; body: unknown }[];
  let endpoint: string;
  beforeAll(async () => {
    seen = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: JSON.parse(body) as unknown });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ refunded: true }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/refund`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('POSTs the call to its endpoint, signed, with the call key as Idempotency-Key', async () => {
    const at = sessionCatalog([{ name: 'refund', description: 'Refunds.', inputSchema: { type: 'object' }, endpoint }]);
    const kind = new WebhookKind({
      addressPolicy: () => new WebhookAddressPolicy(new WebhookAllowList(), 'single'),
      secretOf: (tenant) => (tenant === 'acme' ? 'shh' : undefined),
    });
    await expect(kind.call(made(toolNamed('refund', RUN, at), { order: 9 }))).resolves.toEqual({ refunded: true });
    expect(seen[0].body).toEqual({
      tool: 'refund',
      input: { order: 9 },
      callId: 'bridge:callValue:1',
      runId: 'run_1',
      sessionId: 'sess_1',
    });
    expect(seen[0].headers['idempotency-key']).toBe('run_1:5');
    expect(Object.keys(seen[0].headers).some((name) => name.includes('signature'))).toBe(true);
  });

  it("sends a tenant tool's sealed headers, opened for the call; fails it, naming the setting, without a key", async () => {
    const vault = new HeaderVault('k'.repeat(32));
    const sealedHeaders = vault.seal({ Authorization: 'Bearer t0ken' }, { tenant: 'acme', tool: 'lookup', endpoint });
    const tenantTool = {
      name: 'lookup',
      description: 'd',
      inputSchema: { type: 'object' },
      endpoint,
      headerNames: ['Authorization'],
      sealedHeaders,
    };
    const at = new SessionToolCatalog([], [], [], 'acme', [tenantTool]);
    const policy = () => new WebhookAddressPolicy(new WebhookAllowList(), 'single');
    const kind = new WebhookKind({ addressPolicy: policy, secretOf: () => undefined, headerVault: vault });
    await kind.call(made(toolNamed('lookup', RUN, at), {}));
    expect(seen.at(-1)?.headers.authorization).toBe('Bearer t0ken');
    expect(JSON.stringify(seen.at(-1)?.body)).not.toContain('t0ken');
    const keyless = new WebhookKind({ addressPolicy: policy, secretOf: () => undefined, headerVault: null });
    await expect(keyless.call(made(toolNamed('lookup', RUN, at), {}))).rejects.toThrow(noSecretsKeyMessage('lookup'));
    // Sealed for another tenant: it does not open here.
    const elsewhere = new SessionToolCatalog([], [], [], 'beta', [tenantTool]);
    await expect(kind.call(made(toolNamed('lookup', { ...RUN, ref: { tenant: 'beta', sessionId: 's' } }, elsewhere), {}))).rejects.toThrow(
      'tool lookup: the tool headers cannot be decrypted',
    );
  });

  it('refuses to await a client tool without endpoint (an awaitResults run)', async () => {
    const kind = new WebhookKind(noWebhooks);
    await expect(kind.call(made(toolNamed('ask_user', { ...RUN, awaitResults: true }), {}))).rejects.toThrow(
      'client tool ask_user is answered by the platform; it cannot be awaited with awaitResults.',
    );
  });
});

describe('McpKind', () => {
  it('owns MCP tools only while the deployment has MCP servers', () => {
    let servers: { callTool: () => Promise<never> } | null = null;
    const kind = new McpKind(() => servers);
    expect(kind.handles(toolNamed('MCP.tracker.createIssue'))).toBe(false);
    servers = { callTool: never };
    expect(kind.handles(toolNamed('MCP.tracker.createIssue'))).toBe(true);
    expect(kind.handles(toolNamed('refund'))).toBe(false);
  });
});

describe('PlatformSurfaceKind', () => {
  const skills = { list: () => Promise.resolve([{ name: 'deploy', description: 'How we deploy.' }]), read: () => Promise.resolve(null) };
  const invoked: unknown[] = [];
  const nodes = {
    list: () => Promise.resolve([]),
    get: (tenant: string, idOrName: unknown) => Promise.resolve({ tenant, idOrName }),
    invoke: (_tenant: string, input: unknown, options: { timeoutMs: number }) => Promise.resolve(invoked.push([input, options.timeoutMs])),
  };
  const kind = new PlatformSurfaceKind(surfaceHandlers({ skills, nodes: nodes as never, nodeInvokeTimeoutMs: 30_000 }));

  it('has a handler for every surface the catalog says the worker answers, and owns no other', () => {
    for (const entry of platformSurfaces({ agents: true })) {
      const tool = { entry, run: RUN, catalog };
      expect([entry.callableName, kind.handles(tool)]).toEqual([entry.callableName, entry.callableName !== 'agents.run']);
    }
    expect(kind.handles(toolNamed('read'))).toBe(false);
  });

  it("answers each surface from the session's tenant", async () => {
    await expect(kind.call(made(toolNamed('skills.list'), {}))).resolves.toEqual([{ name: 'deploy', description: 'How we deploy.' }]);
    await expect(kind.call(made(toolNamed('nodes.get'), { idOrName: 'mac' }))).resolves.toEqual({ tenant: 'acme', idOrName: 'mac' });
    await expect(kind.call(made(toolNamed('skills.read'), { name: 'missing' }))).rejects.toThrow('unknown skill: missing');
  });

  it("gives nodes.invoke the deployment's node deadline (SPEC §17), whatever is left of the leg", async () => {
    await kind.call(made(toolNamed('nodes.invoke'), { node: 'mac' }));
    await kind.call(made(toolNamed('nodes.invoke'), { node: 'mac' }, { budgetLeft: () => 0 }));
    expect(invoked).toEqual([
      [{ node: 'mac' }, 30_000],
      [{ node: 'mac' }, 30_000],
    ]);
  });

  it('says what tool.called records: node and command of nodes.invoke when they are strings, nothing else', () => {
    expect(kind.called(toolNamed('nodes.invoke'), { node: 'mac', command: 'node.listDir', params: {} })).toEqual({
      node: 'mac',
      command: 'node.listDir',
    });
    expect(kind.called(toolNamed('nodes.invoke'), { node: 7 })).toEqual({});
    expect(kind.called(toolNamed('skills.read'), { node: 'mac' })).toEqual({});
  });
});

describe('PlatformAnsweredKind', () => {
  it('in a run that parks: waits on the bridge, handed there once admitted unless the bridge took it already', async () => {
    const kind = new PlatformAnsweredKind();
    expect(kind.parksOnBridge(toolNamed('agents.run'))).toBe(true);
    const moves: string[] = [];
    const gate = { hold: never, resume: never, handToPlatform: () => moves.push('handed') };
    const abort = new AbortController();
    const admitted = kind.call(made(toolNamed('ask_user'), {}, { gate, signal: abort.signal }));
    const taken = kind.call(made(toolNamed('ask_user'), {}, { gate, signal: abort.signal, handedOver: true }));
    expect(moves).toEqual(['handed']);
    abort.abort();
    await expect(admitted).rejects.toThrow(CANCELED_MESSAGE);
    await expect(taken).rejects.toThrow(CANCELED_MESSAGE);
  });

  it('in an awaitResults run: waits here until settled, withdrawn, or the run is discarded', async () => {
    const kind = new PlatformAnsweredKind();
    const run = { ...RUN, awaitResults: true };
    expect(kind.parksOnBridge(toolNamed('agents.run', run))).toBe(false);
    const abort = new AbortController();
    const first = kind.call(made(toolNamed('agents.run', run), {}, { call: callOf('a', 'callValue', {}), signal: abort.signal }));
    kind.call(made(toolNamed('agents.run', run), {}, { call: callOf('b', 'callValue', {}) })).catch(() => undefined);
    expect([kind.awaits('a'), kind.awaits('b')]).toEqual([true, true]);
    kind.withdraw('b');
    expect(kind.settle('b', { ok: true, value: 1 })).toBe(false);
    abort.abort();
    await expect(first).rejects.toThrow(CANCELED_MESSAGE);
    expect(kind.awaits('a')).toBe(false);
  });
});

function never(): Promise<never> {
  return Promise.reject(new Error('not called in this test'));
}
