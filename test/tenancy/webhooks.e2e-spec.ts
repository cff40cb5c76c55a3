import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "Webhooks and MCP", on a keyed two-tenant deployment and a single-mode one: which
 * addresses a client tool endpoint may reach, checked at registration and when called; redirects
 * are not followed; MCP servers scoped to tenants. Every endpoint that is actually called is a
 * loopback server of this file; the refused ones (metadata, private, CGNAT) are only registered,
 * never sent traffic.
 */

jest.setTimeout(90_000);

const FIXTURE_MCP = join(__dirname, '..', '..', 'libs', 'tools', 'test-fixtures', 'fixture-mcp-server.js');
/** The multi-tenant stack's allowed loopback address: 127.0.0.1 (Redis, the API) stays refused. */
const ALLOWED_HOST = '127.0.0.2';
/** Any mention of the alpha-only server (the fixture's descriptions say "tracker" in prose). */
const TRACKER = /MCP\.tracker|mcp\/tracker|"tracker"|Servers: [^.]*tracker/u;

interface Hook {
  server: Server;
  url: string;
  /** `<path> <tool name>` of every request received. */
  calls: string[];
}

/** A webhook endpoint: `/hook` answers `{ok:true, input}`, `/redirect` answers 302 to `/stolen`. */
function startHook(host: string): Promise<Hook> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body || '{}') as { tool?: string; input?: unknown };
      calls.push(`${req.url} ${parsed.tool}`);
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${url}/stolen`, 'content-type': 'application/json' });
        res.end('{"redirected":true}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, path: req.url, input: parsed.input }));
    });
  });
  let url = '';
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      url = `http://${host}:${(server.address() as AddressInfo).port}`;
      resolve({ server, url, calls });
    });
  });
}

const tool = (name: string, endpoint?: string) => ({ name, description: `${name} tool`, ...(endpoint ? { endpoint } : {}) });

async function putTools(client: CodeModeClient, sid: string, tools: unknown[]): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await client.raw('PUT', `/v1/sessions/${sid}/tools`, { body: JSON.stringify({ tools }) });
  return { status: res.status, body: res.body as Record<string, unknown> };
}

async function toolNames(client: CodeModeClient, sid: string): Promise<string[]> {
  const res = await client.raw('GET', `/v1/sessions/${sid}/tools`);
  return (res.body as { catalog: { callableName: string }[] }).catalog.map((entry) => entry.callableName);
}

function completedValue(result: CodeModeResult): unknown {
  if (result.status !== 'completed') throw new Error(`cell did not complete: ${JSON.stringify(result)}`);
  return (result as { value: unknown }).value;
}

describe('webhooks and MCP servers on a two-tenant deployment (SPEC §10)', () => {
  let stack: TestStack;
  let alpha: CodeModeClient;
  let beta: CodeModeClient;
  let hook: Hook;

  beforeAll(async () => {
    hook = await startHook(ALLOWED_HOST);
    stack = await TestStack.start({
      apiKeys: 'k1:alpha,k2:beta',
      env: {
        CODEMODE_WEBHOOK_ALLOW: ALLOWED_HOST,
        CODEMODE_MCP_SERVERS: JSON.stringify([
          { name: 'tracker', command: process.execPath, args: [FIXTURE_MCP], tenants: ['alpha'] },
          { name: 'shared', command: process.execPath, args: [FIXTURE_MCP] },
        ]),
      },
    });
    alpha = stack.client('k1');
    beta = stack.client('k2');
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.server.close();
  });

  it.each([
    ['redis', 'http://127.0.0.1:6379/', 'is a loopback address (127.0.0.1)'],
    ['metadata', 'http://169.254.169.254/latest/meta-data', 'is a link-local address (169.254.169.254)'],
    ['metrics', 'http://localhost:9464/metrics', 'resolves to a loopback address'],
    ['mapped', 'http://[::ffff:127.0.0.1]:3000/', 'is a loopback address (::ffff:7f00:1)'],
    ['lan', 'http://10.0.0.5/', 'is a private address (10.0.0.5)'],
    ['cgnat', 'http://100.64.0.1/', 'is a carrier-grade NAT (CGNAT) address (100.64.0.1)'],
    ['decimal', 'http://2130706433/', 'is a loopback address (127.0.0.1)'],
    ['unspecified', 'http://0.0.0.0:8080/', 'is an unspecified address (0.0.0.0)'],
  ])('refuses registering %s (%s) with 400 naming the tool, storing nothing', async (name, endpoint, reason) => {
    const sid = `refuse-${name}`;
    expect((await putTools(alpha, sid, [tool('keep_me')])).status).toBe(200);
    const res = await putTools(alpha, sid, [tool('fine'), tool(`probe_${name}`, endpoint)]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_input', details: { field: 'tools.1.endpoint', tool: `probe_${name}` } });
    expect(res.body.error).toMatch(new RegExp(`^tool probe_${name}: endpoint \\S+ `, 'u'));
    expect(res.body.error).toContain(reason);
    expect(res.body.error).toContain('CODEMODE_WEBHOOK_ALLOW');
    const names = await toolNames(alpha, sid);
    expect(names).toContain('keep_me');
    expect(names).not.toContain(`probe_${name}`);
    expect(names).not.toContain('fine');
  });

  it('calls an endpoint on an allow-listed loopback address', async () => {
    expect((await putTools(alpha, 'hook-ok', [tool('allowed_hook', `${hook.url}/hook`)])).status).toBe(200);
    const value = completedValue(await alpha.exec('hook-ok', { title: 'allowed', code: 'return await allowed_hook({ n: 1 });' }));
    expect(value).toEqual({ ok: true, path: '/hook', input: { n: 1 } });
    expect(hook.calls).toContain('/hook allowed_hook');
  });

  it('does not follow a redirect: the call fails naming the status', async () => {
    expect((await putTools(alpha, 'hook-redirect', [tool('moving_hook', `${hook.url}/redirect`)])).status).toBe(200);
    const value = completedValue(
      await alpha.exec('hook-redirect', {
        title: 'redirect',
        code: 'try { await moving_hook({}); return "followed"; } catch (e) { return e.message; }',
      }),
    );
    expect(value).toBe('webhook tool moving_hook answered with a redirect (HTTP 302); webhook calls do not follow redirects.');
    expect(hook.calls).toContain('/redirect moving_hook');
    expect(hook.calls.some((call) => call.startsWith('/stolen'))).toBe(false);
  });

  it('shows an MCP server scoped to alpha to alpha only: catalog, namespace, search and API files', async () => {
    const alphaNames = await toolNames(alpha, 'mcp-a');
    expect(alphaNames).toEqual(expect.arrayContaining(['MCP.tracker.createIssue', 'MCP.shared.createIssue']));
    const betaView = await beta.raw('GET', '/v1/sessions/mcp-b/tools');
    expect(betaView.status).toBe(200);
    expect(JSON.stringify(betaView.body)).not.toMatch(TRACKER);
    expect((betaView.body as { catalog: { callableName: string }[] }).catalog.map((e) => e.callableName)).toContain(
      'MCP.shared.createIssue',
    );

    const probe = `
      const found = await catalog.search('create issue', { limit: 50 });
      const files = (await API.list()).files.map((f) => f.path);
      let read = 'ok';
      try { await API.read('mcp/tracker.d.ts'); } catch (e) { read = 'rejected'; }
      let call = 'ok';
      try { await MCP.tracker.createIssue({ title: 'x' }); } catch (e) { call = 'failed'; }
      return { servers: Object.keys(MCP).sort(), viaNamespaces: Object.keys(namespaces.MCP).sort(), found: found.map((h) => h.callableName), files, read, call };`;
    const seenByBeta = completedValue(await beta.exec('mcp-b', { title: 'mcp probe', code: probe })) as Record<string, unknown>;
    expect(seenByBeta).toMatchObject({ servers: ['shared'], viaNamespaces: ['shared'], read: 'rejected', call: 'failed' });
    expect(JSON.stringify(seenByBeta)).not.toMatch(TRACKER);
    const seenByAlpha = completedValue(await alpha.exec('mcp-a', { title: 'mcp probe', code: probe })) as Record<string, unknown>;
    expect(seenByAlpha).toMatchObject({ servers: ['shared', 'tracker'], read: 'ok', call: 'ok' });
    expect(seenByAlpha.found).toEqual(expect.arrayContaining(['MCP.tracker.createIssue']));
    expect(seenByAlpha.files).toEqual(expect.arrayContaining(['mcp/tracker.d.ts']));
  });
});

describe('webhooks on a single-mode deployment (development)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let hook: Hook;

  beforeAll(async () => {
    hook = await startHook('127.0.0.1');
    // No API keys: the API is `single`. The worker is told so too instead of waiting for the API's
    // record, whose first write can miss a Redis connection still coming up (then it is retried
    // only a minute later, and the worker acts as `multi` until it reads one).
    stack = await TestStack.start({ env: { CODEMODE_TENANCY: 'single' } });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.server.close();
  });

  it('calls a loopback endpoint, by address and by the name localhost', async () => {
    const port = new URL(hook.url).port;
    expect(
      (await putTools(client, 'dev', [tool('by_ip', `${hook.url}/hook`), tool('by_name', `http://localhost:${port}/hook`)])).status,
    ).toBe(200);
    const value = completedValue(
      await client.exec('dev', { title: 'loopback', code: 'return [await by_ip({ a: 1 }), await by_name({ b: 2 })];' }),
    );
    expect(value).toEqual([
      { ok: true, path: '/hook', input: { a: 1 } },
      { ok: true, path: '/hook', input: { b: 2 } },
    ]);
    expect(hook.calls).toEqual(expect.arrayContaining(['/hook by_ip', '/hook by_name']));
  });

  it('still refuses private, link-local and CGNAT addresses', async () => {
    for (const endpoint of ['http://10.0.0.5/', 'http://169.254.169.254/latest/meta-data', 'http://100.64.0.1/']) {
      const res = await putTools(client, 'dev-refused', [tool('remote', endpoint)]);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_input', details: { tool: 'remote' } });
    }
  });
});
