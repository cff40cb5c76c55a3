import { Redis } from 'ioredis';
import type { CodeModeClient } from '@codemode/client';
import { PrivateRedis } from '../utils/private-redis';
import { TestStack } from '../utils/test-stack';
import { fillRedis } from './chaos-helpers';

jest.setTimeout(90_000);

/**
 * SPEC §2 "Redis refusing a write for memory", on a Redis of its own at `maxmemory` under
 * `noeviction`: `exec`/`wait` answer `failed`/`runtime_unavailable` with the store-full text,
 * other writing routes 503 with `Retry-After` and the same text; never `internal_error`, never
 * Redis's own words. Reads still work, and once memory is freed the same calls succeed.
 */
const STORE_FULL = 'code mode store is full (Redis refused the write for memory); retry later or ask the operator to free memory.';

/** Short, so the test stays full for several leases: none may lapse (SPEC §2 "leases keep renewing"). */
const LEASE_MS = 1500;

let redis: PrivateRedis;
let admin: Redis;
let stack: TestStack;
let client: CodeModeClient;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  admin = new Redis(redis.url);
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  stack = await TestStack.start({ redisUrl: redis.url, env: { CODEMODE_LEASE_MS: String(LEASE_MS) } });
  client = stack.client();
});

afterAll(async () => {
  await stack?.stop();
  admin?.disconnect();
  await redis?.cleanup();
});

const fillUp = (): Promise<void> => fillRedis(admin);

test('a full Redis answers exec, wait and REST writes as "store is full", and recovers when memory is freed', async () => {
  expect(await client.exec('full', { title: 'before', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });
  const parked = await client.exec('full', { title: 'park', code: 'await yield_control("x"); return 2' });
  expect(parked).toMatchObject({ status: 'waiting' });
  await fillUp();

  const exec = await client.exec('full', { title: 'refused', code: 'return 3' });
  expect(exec).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: STORE_FULL, failurePhase: 'host' });
  const wait = await client.wait('full', parked.status === 'waiting' ? parked.runId : '');
  expect(wait).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: STORE_FULL });

  const put = await client.raw('PUT', '/v1/sessions/full-rest/tools', {
    body: JSON.stringify({ tools: [{ name: 'lookup', description: 'x'.repeat(200_000), inputSchema: { type: 'object' } }] }),
    headers: { 'content-type': 'application/json' },
  });
  expect({ status: put.status, retryAfter: put.headers.get('retry-after'), body: put.body }).toEqual({
    status: 503,
    retryAfter: '2',
    body: { error: STORE_FULL, code: 'runtime_unavailable' },
  });
  expect(JSON.stringify([exec, wait, put.body])).not.toMatch(/OOM|maxmemory|Error:|script/);
  // A read made in a MULTI is refused too at maxmemory (Redis refuses every queued command): as full.
  const read = await client.raw('GET', '/v1/sessions/full');
  expect([200, 503]).toContain(read.status);
  if (read.status === 503) expect(read.body).toEqual({ error: STORE_FULL, code: 'runtime_unavailable' });
  expect(stack.api.logs()).not.toContain('unhandled error in request');

  // Full for three leases: every worker's lease keeps renewing (PEXPIRE runs at maxmemory).
  await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
  const metrics = await (await fetch(`${stack.apiMetricsUrl}/metrics`)).text();
  expect(Number(/^codemode_store_failures_total\{reason="full"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);

  await admin.config('SET', 'maxmemory', '0');
  expect(await client.exec('full', { title: 'after', code: 'return 4' })).toMatchObject({ status: 'completed', value: 4 });
  if (parked.status === 'waiting') expect(await client.wait('full', parked.runId)).toMatchObject({ status: 'completed', value: 2 });
  expect(stack.workers[0].logs()).not.toMatch(/lease lapsed/i);
});

test('a run whose end Redis refused for memory is ended once Redis accepts writes again, with its real outcome', async () => {
  // The cell is running when Redis fills up: its store commit and terminal event are refused.
  const exec = client.exec('full-end', {
    title: 'ends late',
    code: 'await new Promise(r => setTimeout(r, 800)); store("k", "v".repeat(2000)); return 5',
  });
  // Full once the cell runs (its run.started is written), well before its end 800 ms later.
  const started = Date.now() + 5_000;
  // Until the exec arrives the session does not exist (404): not started yet.
  const hasStarted = async () =>
    (await client.events('full-end', { limit: 10 }).catch(() => ({ events: [] }))).events.some((e) => e.type === 'run.started');
  while (!(await hasStarted()) && Date.now() < started) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await fillUp();
  await new Promise((resolve) => setTimeout(resolve, 2500));
  await admin.config('SET', 'maxmemory', '0');
  const answer = await exec;
  // Answered with the outcome if the retried end landed in time, else as unavailable: never internal_error.
  expect(['completed 5', `failed runtime_unavailable`]).toContain(
    answer.status === 'completed'
      ? `completed ${String(answer.value)}`
      : `${answer.status} ${answer.status === 'failed' ? answer.code : ''}`,
  );
  const until = Date.now() + 10_000;
  let events = (await client.events('full-end', { limit: 1000 })).events;
  while (!events.some((e) => e.type === 'run.completed') && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    events = (await client.events('full-end', { limit: 1000 })).events;
  }
  expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'store.committed', 'run.completed']);
  const runId = events[0].runId ?? '';
  // The end really was refused, and written again: the worker says so.
  expect(stack.workers[0].logs()).toContain('Redis unavailable or full; recording the run outcome again');
  expect(await client.getRun('full-end', runId)).toMatchObject({ status: 'completed', lastResult: { status: 'completed', value: 5 } });
});
