import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { CodeModeClient } from '@codemode/client';
import { freePort } from '../utils/free-port';
import { TestStack } from '../utils/test-stack';
import { lagMaxMs, p99, probeWhile, round } from './victim-probes';

/**
 * SPEC §10 "Fate isolation" / "Event loops", adversarially: the attacker (alpha, at its default
 * quotas) sends 32 concurrent execs of 1 MiB of valid code, then 20 concurrent PUT /tools of ~11 MB,
 * then runs cells in the sessions holding those registrations, while the victim (beta) reads its
 * session every 25 ms and runs `return 1`. The victim's reads keep their p99 within the bound, its
 * cell completes, and the API's and the worker's event loops are never blocked for seconds (the
 * attack stalled them 3.6–33 s when acorn and JSON.parse ran on them). The numbers are printed;
 * the bounds are set for a loaded machine (see LOADED_BOUND_MS).
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
let beta: CodeModeClient;
let apiMetricsPort: number;

beforeAll(async () => {
  apiMetricsPort = await freePort();
  stack = await TestStack.start({
    apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta`,
    env: { API_METRICS_PORT: String(apiMetricsPort) },
  });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
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

/** ~11 MB of client tools: 170 tools, each with an 8000-character description and a ~55 KB schema. */
function elevenMegabytesOfTools(): { name: string; description: string; inputSchema: Record<string, unknown> }[] {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 1000; i += 1) properties[`p${i}`] = { type: 'string', description: 'x'.repeat(20) };
  return Array.from({ length: 170 }, (_, i) => ({
    name: `tool${i}`,
    description: 'd'.repeat(8000),
    inputSchema: { type: 'object', properties },
  }));
}

/** The API's metrics: on the public port, or on API_METRICS_PORT where the API serves them there. */
async function apiMetricsUrl(): Promise<string> {
  const open = await fetch(`${stack.baseUrl}/metrics`).then((r) => r.status);
  return open === 200 ? `${stack.baseUrl}/metrics` : `http://127.0.0.1:${apiMetricsPort}/metrics`;
}

/**
 * One attacker request with its body serialized and encoded once beforehand, and its answer
 * drained, never kept or parsed: the victim's probes run in this process too, and must measure the API, not
 * this process encoding twenty ~11 MB strings or parsing twenty ~11 MB catalog views (together
 * ~0.8-1.8 s of this process's event loop, which the probes counted as the API's latency).
 */
async function send(method: string, path: string, body: Uint8Array, status: number): Promise<void> {
  const answered = await new Promise<number>((resolve, reject) => {
    const req = request(`${stack.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${keys.alpha}`, 'content-type': 'application/json', 'content-length': body.byteLength },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  expect({ path, status: answered }).toEqual({ path, status });
}

test('one tenant flooding big execs and tool registrations neither stalls the event loops nor delays another tenant', async () => {
  const worker = `${stack.workerUrl(stack.workers[0])}/metrics`;
  const api = await apiMetricsUrl();
  expect(await beta.exec('victim', { title: 'warm', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });

  // Idle: the victim alone.
  await lagMaxMs(api);
  await lagMaxMs(worker);
  const idle = await probeWhile(beta, 'victim', new Promise((r) => setTimeout(r, 2000)));
  const report: Record<string, unknown> = {
    idle: {
      victimP99Ms: round(p99(idle)),
      reads: idle.length,
      apiLagMaxMs: round(await lagMaxMs(api)),
      workerLagMaxMs: round(await lagMaxMs(worker)),
    },
  };
  const boundMs = Math.max(LOADED_BOUND_MS, 5 * p99(idle));
  process.stdout.write(`idle: ${JSON.stringify(report.idle)}\n`);

  const toolsBody = Buffer.from(JSON.stringify({ tools: elevenMegabytesOfTools() }));
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
      () => Promise.all(Array.from({ length: 20 }, (_, i) => send('PUT', `/v1/sessions/tools-${i}/tools`, toolsBody, 200))),
    ],
    [
      '4 cells in sessions holding ~11 MB of tools',
      () => Promise.all(Array.from({ length: 4 }, (_, i) => alpha.exec(`tools-${i}`, { title: 'small', code: 'return 1' }))),
    ],
  ];
  for (const [name, attack] of attacks) {
    const started = performance.now();
    const attacked = attack();
    const victimCell = new Promise((r) => setTimeout(r, 500)).then(() => beta.exec('victim', { title: 'during', code: 'return 1' }));
    const latencies = await probeWhile(beta, 'victim', Promise.allSettled([attacked, victimCell]));
    const outcomes = await Promise.allSettled([attacked]);
    report[name] = {
      attackSeconds: round((performance.now() - started) / 1000),
      attackFulfilled: outcomes[0].status === 'fulfilled',
      victimP99Ms: round(p99(latencies)),
      victimMaxMs: round(Math.max(...latencies)),
      reads: latencies.length,
      apiLagMaxMs: round(await lagMaxMs(api)),
      workerLagMaxMs: round(await lagMaxMs(worker)),
    };
    process.stdout.write(`${name}: ${JSON.stringify(report[name])}\n`);
    expect(await victimCell).toMatchObject({ status: 'completed', value: 1 });
    expect({ name, victimP99Ms: p99(latencies) < boundMs }).toEqual({ name, victimP99Ms: true });
    expect({ name, apiLagMaxMs: (report[name] as { apiLagMaxMs: number }).apiLagMaxMs < LOADED_BOUND_MS }).toEqual({
      name,
      apiLagMaxMs: true,
    });
  }
  process.stdout.write(`event loops under attack (bound ${round(boundMs)} ms): ${JSON.stringify(report, null, 2)}\n`);
  expect(await beta.exec('victim', { title: 'after', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });
  expect(stack.api.alive).toBe(true);
});
