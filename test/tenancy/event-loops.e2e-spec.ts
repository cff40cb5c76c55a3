import { randomBytes } from 'node:crypto';
import type { CodeModeClient } from '@codemode/client';
import { eventLoopLagMaxMs } from '../utils/event-loop-lag';
import { freePort } from '../utils/free-port';
import { largeTools } from '../utils/large-tool-lists';
import { sendPreEncoded } from '../utils/pre-encoded-request';
import { TestStack } from '../utils/test-stack';
import { twoTenantProbe, victimHarm, type Victim } from '../utils/two-tenant-probe';

/**
 * SPEC §10 "Fate isolation" / "Event loops", adversarially: the attacker (alpha, at its default
 * quotas) sends 32 concurrent execs of 1 MiB of valid code, then 20 concurrent PUT /tools of ~11 MB,
 * then runs cells in the sessions holding those registrations, while the victim (beta) runs the
 * two-tenant probe (reads its session and runs `return 1`, in rounds). The victim's reads and cells
 * keep their p99 within the bound and complete, and the API's and the worker's event loops are
 * never blocked for seconds (the attack stalled them 3.6–33 s when acorn and JSON.parse ran on
 * them). The numbers are printed; the bounds are set for a loaded machine (see LOADED_BOUND_MS).
 */

jest.setTimeout(300_000);

const run = randomBytes(4).toString('hex');
const keys = { alpha: `ela-${run}`, beta: `elb-${run}` };
const MIB = 1024 * 1024;
/**
 * SPEC's bound is 250 ms on a deployment's own machine; the suite shares two cores with other
 * suites, where even a request of an idle deployment takes tens of ms and the body threads compete
 * with the event loop for the cores. Before body threads each 1 MiB exec held the API's loop for
 * 1.2–1.8 s here, so this bound still fails that.
 */
const LOADED_BOUND_MS = 1000;

let stack: TestStack;
let alpha: CodeModeClient;
let beta: Victim;
let apiMetricsPort: number;

beforeAll(async () => {
  apiMetricsPort = await freePort();
  stack = await TestStack.start({
    apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta`,
    env: { API_METRICS_PORT: String(apiMetricsPort) },
  });
  alpha = stack.client(keys.alpha);
  beta = { client: stack.client(keys.beta), sessionId: 'victim' };
});

afterAll(async () => {
  await stack?.stop();
});

/** 1 MiB of valid JavaScript that returns 1: many small statements, the costly shape for a parser. */
function megabyteOfCode(): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MIB - 64; i += 1) {
    const line = `const v${i} = { a: [${i}, "s${i}", ${i} * 2], b: typeof v${i} };\n`;
    lines.push(line);
    size += line.length;
  }
  return `${lines.join('')}return 1;`;
}

/** The API's metrics: on the public port, or on API_METRICS_PORT where the API serves them there. */
async function apiMetricsUrl(): Promise<string> {
  const open = await fetch(`${stack.baseUrl}/metrics`).then((r) => r.status);
  return open === 200 ? `${stack.baseUrl}/metrics` : `http://127.0.0.1:${apiMetricsPort}/metrics`;
}

/** One of alpha's ~11 MB registrations, from bytes encoded beforehand and its answer drained. */
async function putTools(path: string, body: Uint8Array): Promise<void> {
  const { status } = await sendPreEncoded(stack.baseUrl, keys.alpha, 'PUT', path, body, {}, 0);
  expect({ path, status }).toEqual({ path, status: 200 });
}

test('one tenant flooding big execs and tool registrations neither stalls the event loops nor delays another tenant', async () => {
  const worker = `${stack.workerUrl(stack.workers[0])}/metrics`;
  const api = await apiMetricsUrl();

  // Idle: the victim alone.
  await eventLoopLagMaxMs(api);
  await eventLoopLagMaxMs(worker);
  const { victim: idle } = await twoTenantProbe(stack, beta, () => new Promise((r) => setTimeout(r, 2000)));
  expect(victimHarm(idle, { maxP99Ms: Infinity })).toEqual([]);
  const report: Record<string, unknown> = {
    idle: {
      rounds: idle.rounds,
      read: idle.read,
      exec: idle.exec,
      apiLagMaxMs: Math.round(await eventLoopLagMaxMs(api)),
      workerLagMaxMs: Math.round(await eventLoopLagMaxMs(worker)),
    },
  };
  const boundMs = Math.max(LOADED_BOUND_MS, 5 * idle.read.p99Ms);
  process.stdout.write(`idle: ${JSON.stringify(report.idle)}\n`);

  // ~11 MB: 170 tools of ~65 KB.
  const toolsBody = Buffer.from(JSON.stringify({ tools: largeTools(170, 'tool') }));
  const attacks: [string, () => Promise<unknown>][] = [
    [
      // 28 are refused for module access once parsed whole (the API's cost of a valid cell, without
      // running 28 MiB of code on the worker's two threads); 4 are valid and run.
      '32 concurrent execs of 1 MiB of code',
      () => {
        const code = megabyteOfCode();
        const refused = code.replace(/return 1;$/, 'return require("fs");');
        return Promise.all(
          Array.from({ length: 32 }, (_, i) => alpha.exec(`big-${i % 4}`, { title: 'big', code: i < 4 ? code : refused })),
        );
      },
    ],
    [
      '20 concurrent PUT /tools of ~11 MB',
      () => Promise.all(Array.from({ length: 20 }, (_, i) => putTools(`/v1/sessions/tools-${i}/tools`, toolsBody))),
    ],
    [
      '4 cells in sessions holding ~11 MB of tools',
      () => Promise.all(Array.from({ length: 4 }, (_, i) => alpha.exec(`tools-${i}`, { title: 'small', code: 'return 1' }))),
    ],
  ];
  for (const [name, attack] of attacks) {
    const started = performance.now();
    const { victim } = await twoTenantProbe(stack, beta, attack);
    const apiLagMaxMs = await eventLoopLagMaxMs(api);
    report[name] = {
      attackSeconds: ((performance.now() - started) / 1000).toFixed(1),
      rounds: victim.rounds,
      read: victim.read,
      exec: victim.exec,
      apiLagMaxMs: Math.round(apiLagMaxMs),
      workerLagMaxMs: Math.round(await eventLoopLagMaxMs(worker)),
    };
    process.stdout.write(`${name}: ${JSON.stringify(report[name])}\n`);
    expect({ name, harm: victimHarm(victim, { maxP99Ms: boundMs }) }).toEqual({ name, harm: [] });
    expect({ name, apiLagMaxMs: apiLagMaxMs < LOADED_BOUND_MS }).toEqual({ name, apiLagMaxMs: true });
  }
  process.stdout.write(`event loops under attack (bound ${boundMs} ms): ${JSON.stringify(report, null, 2)}\n`);
  expect(await beta.client.exec('victim', { title: 'after', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });
});
