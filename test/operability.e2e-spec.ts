import { createServer, type Server } from 'node:http';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

/** The value of one sample line, `name{labels} value`, of a Prometheus exposition. */
function sampleValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no sample ${series}`);
  return Number(line.slice(series.length + 1));
}

async function scrape(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

async function eventually(check: () => Promise<void>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const GUEST_FAILED = 'codemode_runs_failed_total{code="internal_error",failure_phase="guest"}';
const HOST_FAILED = 'codemode_runs_failed_total{code="internal_error",failure_phase="host"}';

/** SPEC §19: what an operator reads off the metrics and readiness. */
describe('operability metrics and readiness', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: 'k-ops:acme' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("counts the model's own TypeError as a guest failure, never as a host one", async () => {
    const client = stack.client('k-ops');
    const result = await client.exec('ops-1', { title: 'bug in the model code', code: 'const x = undefined; return x.y;' });
    expect(result).toMatchObject({ status: 'failed', code: 'internal_error', failurePhase: 'guest' });
    const text = await scrape(stack.workerUrl(stack.workers[0]));
    expect(sampleValue(text, GUEST_FAILED)).toBe(1);
    expect(sampleValue(text, HOST_FAILED)).toBe(0);
    expect(sampleValue(text, 'codemode_runs_total{outcome="failed_internal_error"}')).toBe(1);
  });

  it('exports codemode_workers_live and says in /health/ready how many workers are live', async () => {
    await eventually(async () => expect(sampleValue(await scrape(stack.apiMetricsUrl), 'codemode_workers_live')).toBe(1));
    const ready = await fetch(`${stack.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', redis: 'ok', workersLive: 1 });

    const second = await stack.addWorker();
    await eventually(async () => expect(sampleValue(await scrape(stack.apiMetricsUrl), 'codemode_workers_live')).toBe(2));
    await second.stop();
    // A worker that stops gives its lease back: the count falls without waiting for a lapse.
    await eventually(async () => {
      const body = (await (await fetch(`${stack.baseUrl}/health/ready`)).json()) as { workersLive: number };
      expect(body.workersLive).toBe(1);
    });
  });
});

/** The runbook's case: CODEMODE_WEBHOOK_ALLOW on the API only (SPEC §10, §19). */
describe('a webhook allowed on the API but not on the worker', () => {
  let stack: TestStack;
  let hook: Server;
  let hookUrl = '';

  beforeAll(async () => {
    hook = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('{"ok":true}'));
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const address = hook.address();
    hookUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/tool`;
    stack = await TestStack.start({ apiKeys: 'k-hook:acme', workers: 0, env: { CODEMODE_WEBHOOK_ALLOW: '127.0.0.1' } });
    await stack.addWorker({ CODEMODE_WEBHOOK_ALLOW: '' });
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.close();
  });

  it('registers, fails the call naming the setting, and warns on the worker once, naming where to set it', async () => {
    const client = stack.client('k-hook');
    const registered = await client.raw('PUT', '/v1/sessions/hook-1/tools', {
      body: JSON.stringify({ tools: [{ name: 'hook_tool', description: 'calls a webhook', endpoint: hookUrl }] }),
    });
    expect(registered.status).toBe(200);
    const code = 'for (let i = 0; i < 3; i++) { try { await hook_tool({}) } catch (e) { if (i === 2) throw e } }';
    const result = await client.exec('hook-1', { title: 'hook', code });
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.status === 'failed' && result.error).toContain('CODEMODE_WEBHOOK_ALLOW');
    await stack.stop();
    const warnings = stack.workers[0]
      .logs()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 'warn' && String(line.msg).startsWith('webhook call refused'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].msg).toContain('set CODEMODE_WEBHOOK_ALLOW on the workers as on the API');
    expect(warnings[0]).toMatchObject({ tenant: 'acme', sessionId: 'hook-1', tool: 'hook_tool' });
  });
});
