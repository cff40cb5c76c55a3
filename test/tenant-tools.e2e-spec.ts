import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';
import { twoTenantProbe, victimHarm } from './utils/two-tenant-probe';

jest.setTimeout(180_000);

/**
 * SPEC §18 over REST with the real api and worker: tenant tools (`/v1/tools`), in every session's
 * catalog with trusted hints, shadowed by an operator's session client tool, refused to agent keys,
 * called from a cell through their webhook.
 */
const OPERATOR_KEY = 'tenant-tools-alpha-operator';
const AGENT_KEY = 'tenant-tools-alpha-agent';
const BETA_KEY = 'tenant-tools-beta-operator';
const API_KEYS = [`${OPERATOR_KEY}:alpha`, `${AGENT_KEY}:alpha:agent`, `${BETA_KEY}:beta`].join(',');
const LOCKED = 'code mode tool lookup_order was registered by an operator; an agent key cannot change it.';

/** A webhook tool server of the test's own, on loopback: it records each request's headers and body. */
function startOrders(): Promise<{ server: Server; url: string; seen: { headers: IncomingHttpHeaders; body: Record<string, unknown> }[] }> {
  const seen: { headers: IncomingHttpHeaders; body: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'shipped', total: 42 }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, seen });
    }),
  );
}

const LOOKUP = {
  description: 'Look up an order by its id',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'], additionalProperties: false },
  outputSchema: {
    type: 'object',
    properties: { status: { type: 'string' }, total: { type: 'number' } },
    required: ['status', 'total'],
    additionalProperties: false,
  },
};
const HINT_LINE = '- lookup_order { orderId: string } -> { status: string; total: number }';

/** A tenant tool near the schema and description caps (~60 KiB of schema, 8 KiB of description): its body goes to a body thread. */
function bigTool(version: number): Record<string, unknown> {
  const properties = Object.fromEntries(Array.from({ length: 1800 }, (_, i) => [`field_${i}`, { type: 'string' }]));
  return { description: `v${version} ${'d'.repeat(8000)}`, inputSchema: { type: 'object', properties } };
}

describe('tenant tools (SPEC §18)', () => {
  let stack: TestStack;
  let alpha: CodeModeClient;
  let agent: CodeModeClient;
  let beta: CodeModeClient;
  let orders: Awaited<ReturnType<typeof startOrders>>;

  beforeAll(async () => {
    orders = await startOrders();
    stack = await TestStack.start({ apiKeys: API_KEYS, env: { CODEMODE_WEBHOOK_ALLOW: '127.0.0.1' } });
    alpha = stack.client(OPERATOR_KEY);
    agent = stack.client(AGENT_KEY);
    beta = stack.client(BETA_KEY);
  });
  afterAll(async () => {
    await stack?.stop();
    orders?.server.close();
  });

  const send = (client: CodeModeClient, method: string, path: string, body?: unknown) =>
    client.raw(method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  it('stores a tenant tool for operator keys only; lists and deletes it; another tenant sees none', async () => {
    const refused = await send(agent, 'PUT', '/v1/tools/lookup_order', { ...LOOKUP, endpoint: `${orders.url}/lookup` });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: "this API key has the agent role; an operator key is needed to change the tenant's tools.",
    });
    const put = await send(alpha, 'PUT', '/v1/tools/lookup_order', { ...LOOKUP, endpoint: `${orders.url}/lookup`, replaySafe: true });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ name: 'lookup_order', ...LOOKUP, endpoint: `${orders.url}/lookup`, replaySafe: true });
    expect((await send(agent, 'GET', '/v1/tools')).body).toEqual({ tools: [put.body] });
    expect((await send(beta, 'GET', '/v1/tools')).body).toEqual({ tools: [] });

    const bad = await send(alpha, 'PUT', '/v1/tools/x', { description: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', details: { field: 'description' } });

    await send(alpha, 'PUT', '/v1/tools/scratch', { description: 'temporary' });
    expect((await send(agent, 'DELETE', '/v1/tools/scratch')).status).toBe(403);
    expect((await send(alpha, 'DELETE', '/v1/tools/scratch')).body).toEqual({ name: 'scratch', deleted: true });
    const gone = await send(alpha, 'DELETE', '/v1/tools/scratch');
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: 'tool scratch not found.', code: 'not_found' });
  });

  it('shows the tenant tool with its trusted hint in every session, a session client tool with `input unknown`', async () => {
    const note = { ...LOOKUP, name: 'note', description: 'Keep a note', endpoint: `${orders.url}/note` };
    expect((await send(alpha, 'PUT', '/v1/sessions/tt-1/tools', { tools: [note] })).status).toBe(200);
    const view = (await send(alpha, 'GET', '/v1/sessions/tt-1/tools')).body as {
      execDescription: string;
      catalog: Record<string, unknown>[];
    };
    expect(view.execDescription).toContain(HINT_LINE);
    expect(view.execDescription).toContain('- note unknown -> ?');
    expect(view.catalog.find((entry) => entry.toolName === 'lookup_order')).toMatchObject({ source: 'client', trusted: true });
    expect(view.catalog.find((entry) => entry.toolName === 'note')).not.toHaveProperty('trusted');

    const definitions = (await send(alpha, 'GET', '/v1/sessions/tt-2/tools/definitions?format=openai')).body as {
      tools: { function: { name: string; description: string } }[];
    };
    expect(definitions.tools.find((tool) => tool.function.name === 'exec')?.function.description).toContain(HINT_LINE);
    const betaView = (await send(beta, 'GET', '/v1/sessions/tt-1/tools')).body as { execDescription: string };
    expect(betaView.execDescription).not.toContain('lookup_order');
  });

  it('calls the tenant tool from a cell through its webhook; search and describe() show it trusted', async () => {
    const result = await alpha.exec('tt-3', {
      title: 'tenant tool',
      code: `
        const order = await lookup_order({ orderId: 'o-1' });
        const [hit] = await catalog.search('lookup order');
        const described = await lookup_order.describe();
        return { order, hit: { toolName: hit.toolName, source: hit.source, trusted: hit.trusted, input: hit.input },
          described: { source: described.source, trusted: described.trusted, output: described.output } };`,
    });
    expect(result).toMatchObject({
      status: 'completed',
      value: {
        order: { status: 'shipped', total: 42 },
        hit: { toolName: 'lookup_order', source: 'client', trusted: true, input: '{ orderId: string }' },
        described: { source: 'client', trusted: true, output: '{ status: string; total: number }' },
      },
    });
    expect(orders.seen.at(-1)?.body).toMatchObject({ input: { orderId: 'o-1' }, sessionId: 'tt-3' });
  });

  it("refuses an agent key's session tool of that name with §11's 403; an operator's shadows it", async () => {
    const repoint = { name: 'lookup_order', description: 'mine', endpoint: `${orders.url}/steal` };
    const refused = await send(agent, 'PUT', '/v1/sessions/tt-4/tools', { tools: [repoint] });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: LOCKED });

    const shadow = await send(alpha, 'PUT', '/v1/sessions/tt-4/tools', { tools: [{ ...repoint, endpoint: `${orders.url}/shadow` }] });
    expect(shadow.status).toBe(200);
    const entries = (shadow.body as { catalog: Record<string, unknown>[] }).catalog.filter((entry) => entry.toolName === 'lookup_order');
    expect(entries).toEqual([expect.objectContaining({ description: 'mine', input: 'unknown' })]);
    expect(entries[0]).not.toHaveProperty('trusted');
    const called = await alpha.exec('tt-4', { title: 'shadow', code: `return await lookup_order({ orderId: 'o-2' });` });
    expect(called).toMatchObject({ status: 'completed' });
    expect(orders.seen.map((request) => request.body.sessionId)).toContain('tt-4');
  });

  it('sees a change of the tenant tools at once in a session whose catalog was cached', async () => {
    const before = (await send(alpha, 'GET', '/v1/sessions/tt-1/tools')).body as { execDescription: string };
    expect(before.execDescription).toContain(HINT_LINE);
    await send(alpha, 'PUT', '/v1/tools/ship_order', {
      description: 'Ship',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
    });
    const after = (await send(alpha, 'GET', '/v1/sessions/tt-1/tools')).body as { execDescription: string };
    expect(after.execDescription).toContain('- ship_order { id?: string } -> ?');
    const listed = await alpha.exec('tt-3', {
      title: 'list',
      code: `return catalog.all().map((tool) => tool.toolName).filter((name) => name.endsWith('_order'));`,
    });
    expect(listed).toMatchObject({ status: 'completed', value: expect.arrayContaining(['lookup_order', 'ship_order']) });
    await send(alpha, 'DELETE', '/v1/tools/ship_order');
    const removed = await alpha.exec('tt-3', { title: 'list', code: `return typeof ship_order;` });
    expect(removed).toMatchObject({ status: 'completed', value: 'undefined' });
  });

  it("keeps another tenant's reads and execs in time while one fills its tenant tools at the caps and rebuilds every catalog (fate isolation)", async () => {
    const { attack, victim } = await twoTenantProbe(stack, { client: beta, sessionId: 'victim' }, async () => {
      const statuses: number[] = [];
      for (let batch = 0; batch < 4; batch += 1) {
        const puts = await Promise.all(
          Array.from({ length: 16 }, (_, i) => send(alpha, 'PUT', `/v1/tools/big_${batch * 16 + i}`, bigTool(batch))),
        );
        statuses.push(...puts.map((put) => put.status));
      }
      for (let round = 0; round < 3; round += 1) {
        // A new version each round: every session's view and catalog is derived again.
        statuses.push((await send(alpha, 'PUT', '/v1/tools/big_0', bigTool(round + 10))).status);
        // Session registrations over 8 KiB: checked on a body thread, with the tenant's tools sent along.
        const registrations = await Promise.all(
          Array.from({ length: 3 }, (_, j) =>
            send(alpha, 'PUT', `/v1/sessions/atk-${j}/tools`, { tools: [{ name: `own_${round}`, ...bigTool(round) }] }),
          ),
        );
        statuses.push(...registrations.map((put) => put.status));
        const reads = await Promise.all(Array.from({ length: 6 }, (_, j) => send(alpha, 'GET', `/v1/sessions/atk-${j}/tools`)));
        statuses.push(...reads.map((read) => read.status));
        const cell = await alpha.exec('atk-0', { title: 'atk', code: 'return catalog.all().length' });
        statuses.push(cell.status === 'completed' ? 200 : 500);
      }
      return statuses;
    });
    // The attacker's own calls may meet its rate limit (429); nothing else.
    expect(attack.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(attack.filter((status) => status === 200).length).toBeGreaterThan(20);
    expect(victimHarm(victim, { maxP99Ms: 10_000 })).toEqual([]);
  });
});
