import { INVALID_SESSION_ID_MESSAGE } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const API_KEY = 'key-code-mode-route-3f1a';
const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * REST exec and wait are served in front of Nest (issue 41 item 3): every path Express's router
 * matched for them before still reaches them, with the same answers, and the request rules every
 * route goes through (key, request id, access line, Code Mode result for any input) still apply.
 */
describe('the exec and wait route', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `${API_KEY}:acme`, env: { LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers exec on every spelling of its path the router matched, and wait beside it', async () => {
    const client = stack.client(API_KEY);
    const paths = ['/v1/sessions/rt-1/exec', '/v1/sessions/rt-1/exec/', '/V1/Sessions/rt-1/EXEC', '/v1/sessions/rt-1/exec?x=1'];
    for (const [i, path] of paths.entries()) {
      const answer = await client.raw('POST', path, { headers: JSON_HEADERS, body: JSON.stringify({ title: 't', code: `return ${i}` }) });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status: 'completed', value: i });
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
    const parked = await client.exec('rt-1', { title: 'yield', code: 'await yield_control(); return 7;' });
    expect(parked.status).toBe('waiting');
    const runId = (parked as { runId: string }).runId;
    const waited = await client.raw('POST', '/v1/sessions/rt-1/wait/', { headers: JSON_HEADERS, body: JSON.stringify({ runId }) });
    expect(waited.body).toMatchObject({ status: 'completed', value: 7 });
  });

  it('answers a Code Mode result for an undecodable session id or a body that is not an object, and 404 for other methods', async () => {
    const client = stack.client(API_KEY);
    const undecodable = await client.raw('POST', '/v1/sessions/%E0%A4%A/exec', {
      headers: JSON_HEADERS,
      body: '{"title":"t","code":"return 1"}',
    });
    expect(undecodable.status).toBe(200);
    expect(undecodable.body).toMatchObject({ status: 'failed', code: 'invalid_input', error: INVALID_SESSION_ID_MESSAGE });
    const notObject = await client.raw('POST', '/v1/sessions/rt-2/wait', { headers: JSON_HEADERS, body: '[1]' });
    expect(notObject.body).toMatchObject({ status: 'failed', code: 'invalid_input', error: 'request body must be a JSON object.' });
    const get = await client.raw('GET', '/v1/sessions/rt-2/exec');
    expect(get.status).toBe(404);
    expect(get.body).toEqual({ error: 'Cannot GET /v1/sessions/rt-2/exec', code: 'not_found' });
    const unkeyed = await stack.client('wrong-key').raw('POST', '/v1/sessions/rt-2/exec', { headers: JSON_HEADERS, body: '{}' });
    expect(unkeyed.status).toBe(401);
  });

  it('writes the access line with the route template, tenant, session and request id', async () => {
    const client = stack.client(API_KEY);
    await client.raw('POST', '/v1/sessions/rt-3/exec', {
      headers: { ...JSON_HEADERS, 'x-request-id': 'route-line-1' },
      body: JSON.stringify({ title: 't', code: 'return 1' }),
    });
    const deadline = Date.now() + 5_000;
    let line: Record<string, unknown> | undefined;
    while (!line && Date.now() < deadline) {
      line = stack.api
        .logs()
        .split('\n')
        .filter((text) => text.includes('"route-line-1"') && text.includes('"msg":"request"'))
        .map((text) => JSON.parse(text) as Record<string, unknown>)[0];
      if (!line) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(line).toMatchObject({ route: '/v1/sessions/:sid/exec', status: 200, tenant: 'acme', sessionId: 'rt-3', method: 'POST' });
  });
});
