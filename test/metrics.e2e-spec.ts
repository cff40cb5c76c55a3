import { randomBytes } from 'node:crypto';
import { API_METRIC_NAMES, METRIC, WORKER_METRIC_NAMES } from '@codemode/telemetry';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The sample lines of a Prometheus text exposition. */
function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** Families declared by `# TYPE` lines. */
function families(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
}

function valueOf(all: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (!found) throw new Error(`no sample ${name} ${JSON.stringify(labels)}`);
  return found.value;
}

async function scrape(baseUrl: string): Promise<{ text: string; contentType: string | null }> {
  const res = await fetch(`${baseUrl}/metrics`);
  expect(res.status).toBe(200);
  return { text: await res.text(), contentType: res.headers.get('content-type') };
}

describe('GET /metrics on the api and on a worker', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  const sid = `metrics-${randomBytes(4).toString('hex')}`;
  let runId = '';

  beforeAll(async () => {
    // With API keys set (multi-tenant mode): /metrics, on its own port, must still answer without one.
    stack = await TestStack.start({ apiKeys: 'k-metrics:acme' });
    client = stack.client('k-metrics');
    const first = await client.exec(sid, { title: 'metrics', code: 'await ls({}); await yield_control(); return 1' });
    if (first.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(first)}`);
    runId = first.runId;
    expect(await client.wait(sid, runId)).toMatchObject({ status: 'completed', value: 1 });
    const shell = await client.raw('POST', `/v1/sessions/${sid}/shell/exec`, {
      body: JSON.stringify({ command: 'true' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(shell.status).toBe(200);
    expect((await fetch(`${stack.baseUrl}/no/such/${sid}`)).status).toBe(404);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('the api exposes every API metric, unauthenticated, with route templates as labels', async () => {
    const { text, contentType } = await scrape(stack.apiMetricsUrl);
    expect(contentType).toContain('text/plain');
    const names = families(text);
    for (const name of API_METRIC_NAMES) expect(names).toContain(name);
    expect(names).toContain('process_cpu_seconds_total');
    const all = samples(text);
    const count = (route: string, status: string) => valueOf(all, `${METRIC.httpRequestDuration}_count`, { method: 'POST', route, status });
    expect(count('/v1/sessions/:sid/exec', '200')).toBe(1);
    expect(count('/v1/sessions/:sid/wait', '200')).toBe(1);
    expect(count('/v1/sessions/:sid/shell/exec', '200')).toBe(1);
    expect(valueOf(all, `${METRIC.httpRequestDuration}_count`, { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(valueOf(all, METRIC.queueJobs, { queue: 'cells', state: 'waiting' })).toBe(0);
    expect(valueOf(all, METRIC.queueOldestWaitingAge, { queue: 'shell' })).toBe(0);
    expect(valueOf(all, METRIC.buildInfo)).toBe(1);
    expectNoIds(all);
  });

  it('the worker exposes every worker metric after an exec, a wait and a shell command', async () => {
    const { text } = await scrape(stack.workerUrl(stack.workers[0]));
    const names = families(text);
    for (const name of WORKER_METRIC_NAMES) expect(names).toContain(name);
    expect(names).toContain('nodejs_heap_size_used_bytes');
    const all = samples(text);
    expect(valueOf(all, METRIC.runsTotal, { outcome: 'waiting' })).toBe(1);
    expect(valueOf(all, METRIC.runsTotal, { outcome: 'completed' })).toBe(1);
    expect(valueOf(all, `${METRIC.runDuration}_count`, { outcome: 'completed' })).toBe(1);
    expect(valueOf(all, `${METRIC.jobScheduleToStart}_count`, { queue: 'cells' })).toBe(1);
    expect(valueOf(all, `${METRIC.jobScheduleToStart}_count`, { queue: 'worker' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(all, METRIC.resumesTotal, { path: 'owner' })).toBe(1);
    expect(valueOf(all, METRIC.resumesTotal, { path: 'replay' })).toBe(0);
    expect(valueOf(all, METRIC.parkedRuns)).toBe(0);
    expect(valueOf(all, METRIC.parkedSlotsAvailable)).toBe(64);
    expect(valueOf(all, METRIC.sandboxThreads, { state: 'idle' }) + valueOf(all, METRIC.sandboxThreads, { state: 'busy' })).toBe(2);
    expect(valueOf(all, METRIC.shellSessions, { state: 'running' })).toBe(0);
    expect(valueOf(all, `${METRIC.eventAppendDuration}_count`)).toBeGreaterThanOrEqual(4);
    expect(valueOf(all, METRIC.staleWritesRejectedTotal)).toBe(0);
    expect(valueOf(all, METRIC.toolCallsTotal, { source: 'openclaw', outcome: 'ok' })).toBe(1);
    expect(valueOf(all, `${METRIC.toolCallDuration}_count`, { source: 'openclaw' })).toBe(1);
    expect(valueOf(all, METRIC.toolCallsTotal, { source: 'mcp', outcome: 'error' })).toBe(0);
    expect(valueOf(all, `${METRIC.replayDuration}_count`)).toBe(0);
    expectNoIds(all);
  });

  it('in multi-tenant mode serves /metrics on API_METRICS_PORT only: the public port answers 404 (SPEC §10)', async () => {
    expect(stack.apiMetricsUrl).not.toBe(stack.baseUrl);
    const pub = await fetch(`${stack.baseUrl}/metrics`);
    expect(pub.status).toBe(404);
    expect(await pub.text()).not.toContain(METRIC.buildInfo);
    expect((await fetch(`${stack.apiMetricsUrl}/health/live`)).status).toBe(404);
    expect((await fetch(`${stack.apiMetricsUrl}/v1/fleet`)).status).toBe(404);
  });

  /** Labels stay low-cardinality: no run id, no session id, anywhere. */
  function expectNoIds(all: Sample[]): void {
    expect(runId).toMatch(/^cm_/);
    for (const sample of all) {
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toContain('cm_');
        expect(value).not.toContain(sid);
      }
    }
  }
});

describe('queue gauges while no worker consumes', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  // On the shard streams (the default) an entry no worker read yet is `waiting`; as BullMQ jobs
  // (CODEMODE_CELL_DISPATCH=bullmq, passed through by TestStack) cells wait in BullMQ's prioritized
  // set (their priority is the tenant's rank), not its wait list.
  const waitingState = process.env.CODEMODE_CELL_DISPATCH?.trim() === 'bullmq' ? 'prioritized' : 'waiting';
  it('counts a waiting cell and reports how long the oldest has waited', async () => {
    // Never answered while no worker runs; the stack's stop ends it.
    void stack
      .client()
      .exec('queued', { title: 'waits', code: 'return 1' })
      .catch(() => undefined);
    // Read until the cell has waited a second (on a loaded machine its request may land late), bounded.
    let all = samples((await scrape(stack.apiMetricsUrl)).text);
    for (const until = Date.now() + 15_000; Date.now() < until;) {
      if (all.some((s) => s.name === METRIC.queueOldestWaitingAge && s.labels.queue === 'cells' && s.value >= 1)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
      all = samples((await scrape(stack.apiMetricsUrl)).text);
    }
    expect(valueOf(all, METRIC.queueJobs, { queue: 'cells', state: waitingState })).toBe(1);
    expect(valueOf(all, METRIC.queueOldestWaitingAge, { queue: 'cells' })).toBeGreaterThanOrEqual(1);
  });
});
