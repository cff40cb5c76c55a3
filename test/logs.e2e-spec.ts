import { createServer, type Server } from 'node:http';
import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

const API_KEY = 'key-that-must-not-leak-7f3a';
const WEBHOOK_SECRET = 'whsec-that-must-not-leak-91bd';
const SHELL_ENV_VALUE = 'env-value-that-must-not-leak-c2e8';

describe('logs', () => {
  let stack: TestStack;
  let hook: Server;
  let hookUrl = '';

  beforeAll(async () => {
    hook = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const address = hook.address();
    hookUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/tool`;
    stack = await TestStack.start({
      apiKeys: `${API_KEY}:acme`,
      env: { LOG_LEVEL: 'trace', CODEMODE_WEBHOOK_SECRETS: `acme:${WEBHOOK_SECRET}`, CODEMODE_WEBHOOK_ALLOW: '127.0.0.1' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.close();
  });

  it('are JSON lines with ids, and never contain API keys, webhook secrets or shell env values', async () => {
    const client = stack.client(API_KEY);
    await client.raw('PUT', '/v1/sessions/logs-1/tools', {
      body: JSON.stringify({ tools: [{ name: 'hook_tool', description: 'calls a webhook', endpoint: hookUrl }] }),
    });
    expect(await client.exec('logs-1', { title: 't', code: 'return await hook_tool({ a: 1 })' })).toMatchObject({
      status: 'completed',
      value: { ok: true },
    });
    const shell = await client.raw('POST', '/v1/sessions/logs-1/shell/exec', {
      body: JSON.stringify({ command: 'echo "$LEAKY" | wc -c', env: { LEAKY: SHELL_ENV_VALUE } }),
    });
    expect(shell.status).toBe(200);
    await stack.client('wrong-key').raw('GET', '/v1/sessions/logs-1');
    await stack.stop();

    const lines = stack
      .logs()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    const all = stack.logs();
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(WEBHOOK_SECRET);
    expect(all).not.toContain(SHELL_ENV_VALUE);
    const about = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'cell answered');
    expect(about[0]).toMatchObject({ tenant: 'acme', sessionId: 'logs-1', runId: expect.stringMatching(/^cm_/) });
  });
});
