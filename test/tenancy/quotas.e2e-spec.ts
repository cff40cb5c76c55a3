import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "Quotas per tenant", fleet-wide in Redis: each quota is driven past its limit by one
 * tenant, the exact answer is checked, nothing was recorded for the refused call, the place comes
 * back once freed, and a second tenant (beta, on the SPEC defaults) is never affected.
 */
const run = randomBytes(4).toString('hex');
const keys = { alpha: `qa-${run}`, beta: `qb-${run}`, gamma: `qg-${run}`, delta: `qd-${run}`, eps: `qe-${run}` };
const tenantsFile = {
  alpha: { quotas: { maxInflight: 2, maxParkedRuns: 2, maxShellProcesses: 2, maxStreams: 1 } },
  gamma: { quotas: { rate: 2, burst: 3 } },
  delta: { quotas: { maxParkedBytes: 1024 } },
  eps: { quotas: { rate: 1, burst: 2 } },
};

let stack: TestStack;
let dir: string;
let alpha: CodeModeClient;
let beta: CodeModeClient;
const sleepCell = (ms: number) => ({ title: 'sleep', code: `await new Promise((r) => setTimeout(r, ${ms})); return 'slept'` });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quotas-'));
  const file = join(dir, 'tenants.json');
  writeFileSync(file, JSON.stringify(tenantsFile));
  stack = await TestStack.start({
    apiKeys: Object.entries(keys)
      .map(([tenant, key]) => `${key}:${tenant}`)
      .join(','),
    env: { CODEMODE_TENANTS_FILE: file, CODEMODE_SHELL_SANDBOX: 'bwrap' },
  });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function betaUnaffected(): Promise<void> {
  expect(await beta.exec('b', { title: 'add', code: 'return 1+1' })).toMatchObject({ status: 'completed', value: 2 });
}

test('in-flight exec/wait past the quota: 429 tenant_limit inflight with Retry-After; nothing recorded; the Idempotency-Key is not consumed', async () => {
  const first = [alpha.exec('inf', sleepCell(1500)), alpha.exec('inf', sleepCell(1500))];
  await new Promise((r) => setTimeout(r, 300));
  const refused = await alpha.raw('POST', '/v1/sessions/inf/exec', {
    body: JSON.stringify({ title: 'third', code: 'return 3' }),
    headers: { 'content-type': 'application/json', 'idempotency-key': `k-${run}` },
  });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: expect.stringContaining('in-flight'), code: 'tenant_limit', details: { limit: 'inflight' } });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  await betaUnaffected();
  expect((await Promise.all(first)).map((r) => r.status)).toEqual(['completed', 'completed']);
  const titles = (await alpha.transcript('inf')).map((e) => JSON.stringify(e));
  expect(titles.some((t) => t.includes('third'))).toBe(false);
  // The key was not consumed: the same key now runs the cell.
  expect(await alpha.exec('inf', { title: 'third', code: 'return 3' }, { idempotencyKey: `k-${run}` })).toMatchObject({
    status: 'completed',
    value: 3,
  });
});

test('an answered call has given its in-flight slot back: at the quota, calls sent the moment the last answered are never refused', async () => {
  // Two callers (alpha's quota), each sending its next exec as soon as its last one answered.
  const answers = await Promise.all(
    [0, 1].map(async (caller) => {
      const statuses: string[] = [];
      for (let i = 0; i < 25; i += 1) {
        const res = await alpha.raw('POST', `/v1/sessions/back-to-back-${caller}/exec`, {
          body: JSON.stringify({ title: 'next', code: `return ${i}` }),
          headers: { 'content-type': 'application/json' },
        });
        statuses.push(res.status === 200 ? (res.body as { status: string }).status : `HTTP ${res.status}`);
      }
      return statuses;
    }),
  );
  expect(answers).toEqual([Array(25).fill('completed'), Array(25).fill('completed')]);
});

test('parked runs past the quota: the cell fails runtime_unavailable with the SPEC message; a wait gives the place back', async () => {
  const parked = [];
  for (let i = 0; i < 2; i += 1) {
    const r = await alpha.exec('park', { title: `p${i}`, code: 'await yield_control(); return "resumed"' });
    expect(r.status).toBe('waiting');
    parked.push(r);
  }
  const third = await alpha.exec('park', { title: 'p2', code: 'await yield_control(); return "resumed"' });
  expect(third).toMatchObject({
    status: 'failed',
    code: 'runtime_unavailable',
    error: 'code mode parked-run quota reached for this tenant; wait on or abort a parked run first.',
  });
  expect(await beta.exec('b-park', { title: 'bp', code: 'await yield_control(); return 1' })).toMatchObject({ status: 'waiting' });
  const first = parked[0];
  if (first.status !== 'waiting') throw new Error('not parked');
  expect(await alpha.wait('park', first.runId)).toMatchObject({ status: 'completed', value: 'resumed' });
  expect(await alpha.exec('park', { title: 'p3', code: 'await yield_control(); return 1' })).toMatchObject({ status: 'waiting' });
});

test('parked bytes past the quota: the cell fails naming bytes', async () => {
  const delta = stack.client(keys.delta);
  expect(await delta.exec('d', { title: 'park', code: 'await yield_control(); return 1' })).toMatchObject({
    status: 'failed',
    code: 'runtime_unavailable',
    error: 'code mode parked-run bytes quota reached for this tenant (1024 bytes of parked runs); wait on or abort a parked run first.',
  });
  await betaUnaffected();
});

test('running shell sessions past the quota: the call fails with the SPEC text; a kill gives the place back', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const started = await alpha.shellExec('sh', { command: `sleep 30 # ${i}`, background: true });
    expect(started.details).toMatchObject({ status: 'running' });
    ids.push(String((started.details as { sessionId: string }).sessionId));
  }
  expect(await alpha.shellExec('sh', { command: 'echo third' })).toEqual({
    text: 'shell process quota reached for this tenant; kill or wait for a running session first.',
    details: { status: 'failed' },
  });
  expect((await beta.shellExec('bsh', { command: 'echo ok' })).text).toBe('ok');
  await alpha.process('sh', { action: 'kill', sessionId: ids[0] });
  const deadline = Date.now() + 5000;
  let answer = await alpha.shellExec('sh', { command: 'echo again' });
  while (answer.details.status === 'failed' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    answer = await alpha.shellExec('sh', { command: 'echo again' });
  }
  expect(answer.text).toBe('again');
  await alpha.process('sh', { action: 'kill', sessionId: ids[1] });
});

test('event streams past the quota: 429 tenant_limit streams; closing one gives the place back', async () => {
  await alpha.putSession('st', {});
  const open = () =>
    new Promise<{ status: number; body: string; close: () => void }>((resolve, reject) => {
      const req = request(
        `${stack.baseUrl}/v1/sessions/st/events`,
        { headers: { authorization: `Bearer ${keys.alpha}`, accept: 'text/event-stream' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
            if (res.statusCode !== 200 || body.length > 0) resolve({ status: res.statusCode ?? 0, body, close: () => req.destroy() });
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, close: () => undefined }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const first = await open();
  expect(first.status).toBe(200);
  const second = await open();
  expect(second.status).toBe(429);
  expect(JSON.parse(second.body)).toEqual({
    error: expect.stringContaining('stream'),
    code: 'tenant_limit',
    details: { limit: 'streams' },
  });
  const betaStream = await new Promise<number>((resolve) => {
    void beta.putSession('bst', {}).then(() => {
      const req = request(
        `${stack.baseUrl}/v1/sessions/bst/events`,
        { headers: { authorization: `Bearer ${keys.beta}`, accept: 'text/event-stream' } },
        (res) => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.end();
    });
  });
  expect(betaStream).toBe(200);
  first.close();
  const deadline = Date.now() + 5000;
  let third = await open();
  while (third.status !== 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    third = await open();
  }
  expect(third.status).toBe(200);
  third.close();
});

test('request rate past the bucket: 429 tenant_limit rate with Retry-After; other tenants keep their own bucket', async () => {
  const gamma = stack.client(keys.gamma);
  const answers = [];
  for (let i = 0; i < 5; i += 1) answers.push(await gamma.raw('GET', '/v1/sessions/g/tools'));
  const refused = answers.find((a) => a.status === 429);
  expect(refused?.body).toEqual({ error: expect.stringContaining('rate'), code: 'tenant_limit', details: { limit: 'rate' } });
  expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(3);
  await betaUnaffected();
});

test('exec past the request rate (taken in its admission, not the guard): the same 429 rate; nothing recorded; the Idempotency-Key is not consumed', async () => {
  const eps = stack.client(keys.eps);
  const send = (i: number) =>
    eps.raw('POST', '/v1/sessions/e/exec', {
      body: JSON.stringify({ title: `burst-${i}`, code: `return ${i}` }),
      headers: { 'content-type': 'application/json', 'idempotency-key': `e-${run}-${i}` },
    });
  // Sent together: a bucket of 2 (refilled at 1/s) admits two of five, or three on a slow machine.
  const answers = await Promise.all([0, 1, 2, 3, 4].map(send));
  const refused = answers.map((a, i) => ({ a, i })).filter(({ a }) => a.status !== 200);
  expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(2);
  expect(refused.length).toBeGreaterThanOrEqual(1);
  for (const { a } of refused) {
    expect(a.status).toBe(429);
    expect(a.body).toEqual({
      error: 'tenant request rate exceeded (1/s, bursts of 2); slow down and retry after the Retry-After seconds.',
      code: 'tenant_limit',
      details: { limit: 'rate' },
    });
    expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  await betaUnaffected();
  // Each read below is a request too: one token, back in a second.
  const refill = () => new Promise((r) => setTimeout(r, 1100 * Math.max(1, Number(refused[0].a.headers.get('retry-after')))));
  await refill();
  const transcript = (await eps.transcript('e')).map((e) => JSON.stringify(e));
  for (const { i } of refused) expect(transcript.some((t) => t.includes(`burst-${i}`))).toBe(false);
  // The keys were not consumed: the same key runs its cell.
  const { i } = refused[0];
  await refill();
  expect(await eps.exec('e', { title: `burst-${i}`, code: `return ${i}` }, { idempotencyKey: `e-${run}-${i}` })).toMatchObject({
    status: 'completed',
    value: i,
  });
});

test('refusals are counted in codemode_tenant_limited_total{limit}, without a tenant label', async () => {
  const apiMetrics = await (await fetch(`${stack.apiMetricsUrl}/metrics`)).text();
  expect(apiMetrics).toMatch(/codemode_tenant_limited_total\{limit="inflight"\} [1-9]/);
  expect(apiMetrics).toMatch(/codemode_tenant_limited_total\{limit="rate"\} [1-9]/);
  expect(apiMetrics).toMatch(/codemode_tenant_limited_total\{limit="streams"\} [1-9]/);
  expect(apiMetrics).not.toMatch(/codemode_tenant_limited_total\{[^}]*tenant=/);
  const workerMetrics = await (await fetch(`${stack.workerUrl(stack.workers[0])}/metrics`)).text();
  expect(workerMetrics).toMatch(/codemode_tenant_limited_total\{limit="parked_runs"\} [1-9]/);
  expect(workerMetrics).toMatch(/codemode_tenant_limited_total\{limit="parked_bytes"\} [1-9]/);
  expect(workerMetrics).toMatch(/codemode_tenant_limited_total\{limit="shell_processes"\} [1-9]/);
});

describe('a crashed process does not leave its tenants’ counts stuck', () => {
  let crashStack: TestStack;
  beforeAll(async () => {
    crashStack = await TestStack.start({
      apiKeys: `cq-${run}:alpha`,
      env: { CODEMODE_TENANT_MAX_INFLIGHT: '1', CODEMODE_TENANT_MAX_SHELL_PROCESSES: '1', CODEMODE_QUOTA_LEASE_MS: '2000' },
    });
  });
  afterAll(async () => {
    await crashStack?.stop();
  });

  test('an API killed with a call in flight: its slot lapses with its lease and the next call runs', async () => {
    const client = crashStack.client(`cq-${run}`);
    const inFlight = client.exec('c', sleepCell(5000)).catch(() => null);
    await new Promise((r) => setTimeout(r, 300));
    await crashStack.restartApi({ signal: 'SIGKILL' });
    await inFlight;
    const deadline = Date.now() + 10_000;
    let answer = await client.raw('POST', '/v1/sessions/c/exec', {
      body: JSON.stringify({ title: 'after', code: 'return 7' }),
      headers: { 'content-type': 'application/json' },
    });
    while (answer.status === 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      answer = await client.raw('POST', '/v1/sessions/c/exec', {
        body: JSON.stringify({ title: 'after', code: 'return 7' }),
        headers: { 'content-type': 'application/json' },
      });
    }
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'completed', value: 7 });
  });

  test('a worker killed with a shell session running: its slot lapses and another worker starts the next command', async () => {
    const client = crashStack.client(`cq-${run}`);
    expect((await client.shellExec('w', { command: 'sleep 60', background: true })).details).toMatchObject({ status: 'running' });
    const doomed = crashStack.workers[0];
    await crashStack.addWorker();
    await doomed.kill();
    const deadline = Date.now() + 15_000;
    let answer = await client.shellExec('w2', { command: 'echo free' });
    while (answer.text !== 'free' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      answer = await client.shellExec('w2', { command: 'echo free' });
    }
    expect(answer.text).toBe('free');
  });
});
