import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CodeModeClient } from '@codemode/client';
import { buildOpenApiDocument } from './openapi-document';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every `/v1` operation of the OpenAPI document, as `METHOD /v1/template`. */
function documentedOperations(): string[] {
  const { paths } = buildOpenApiDocument('0.0.0');
  return Object.entries(paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => HTTP_METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}

/** The documented operation a request hit: its method and a path matching the template segment by segment. */
function operationOf(method: string, path: string, operations: string[]): string[] {
  return operations.filter((operation) => {
    const [opMethod, template] = operation.split(' ');
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return opMethod === method && pattern.test(path);
  });
}

/**
 * SPEC §18: the typed client covers every `/v1` route. Each method is called against a local
 * server that records what arrives; a route the OpenAPI document gains without a client method
 * to call it fails here.
 */
describe('typed client coverage of the OpenAPI document', () => {
  let server: Server;
  const requests: string[] = [];
  let client: CodeModeClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(`${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`);
      req.resume();
      const streams = (req.headers.accept ?? '').includes('text/event-stream');
      res.writeHead(200, { 'content-type': streams ? 'text/event-stream' : 'application/json' });
      res.end(streams ? '' : '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new CodeModeClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k' });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('has a method for every /v1 operation', async () => {
    const sid = 's1';
    const runId = 'cm_1';
    await client.putSession(sid, {});
    await client.getSession(sid);
    await client.deleteSession(sid);
    await client.listSessions();
    await client.listRuns(sid);
    await client.transcript(sid);
    await client.getStore(sid);
    await client.exec(sid, { title: 't', code: 'return 1' });
    await client.wait(sid, runId);
    await client.getRun(sid, runId);
    await client.abort(sid, runId);
    await client.toolResults(sid, runId, [{ id: 'bridge:tool:1', ok: true }]);
    await client.putTools(sid, []);
    await client.getTools(sid);
    await client.putTenantTool('lookup', { description: 'd' });
    await client.listTenantTools();
    await client.deleteTenantTool('lookup');
    await client.toolDefinitions(sid, 'mcp');
    await client.events(sid);
    await client.shellExec(sid, { command: 'ls' });
    await client.process(sid, { action: 'list' });
    await client.fleet();
    await client.listSkills();
    await client.putSkill('notes', { description: 'd', content: 'c' });
    await client.deleteSkill('notes');
    await client.putSessionSkills(sid, []);
    await client.getPolicy();
    await client.putPolicy({ rules: [] });
    await client.listApprovals();
    await client.listSessionApprovals(sid);
    await client.decideApproval(sid, 'ap_1', { decision: 'approve' });
    await client.listNodes();
    await client.removeNode('nd_1');
    for await (const message of client.connectNode({ name: 'n', platform: 'linux', commands: [] }, new AbortController().signal)) {
      void message;
    }
    await client.answerNode('nd_1', { invocationId: 'inv_1', ok: true, value: null });

    const operations = documentedOperations();
    const covered = new Set(requests.flatMap((request) => operationOf(request.split(' ')[0], request.split(' ')[1], operations)));
    expect(operations.filter((operation) => !covered.has(operation))).toEqual([]);
    expect(operations.length).toBeGreaterThanOrEqual(30);
  });
});
