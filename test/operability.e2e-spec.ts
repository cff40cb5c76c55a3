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
