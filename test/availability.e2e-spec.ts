import { CodeModeResultSchema } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { KeySpace } from '@codemode/events';
import { cellsLeft } from './utils/cell-backlog';
import { freePort } from './utils/free-port';
import { stackRedis, TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

describe('a cell no worker starts within its budget', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('is answered runtime_unavailable, removed from the queue, never runs later, and leaves its Idempotency-Key unused', async () => {
    const client = stack.client();
    await client.putSession('late', { codeMode: { timeoutMs: 300 } });
    const started = Date.now();
    const result = await client.exec('late', { title: 'late', code: 'return 1' }, { idempotencyKey: 'late-1' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({
      status: 'failed',
      code: 'runtime_unavailable',
      error: 'no worker started the cell within its budget; it was not run.',
    });
    const redis = stackRedis();
    try {
      // Taken back at once (its job or its stream entry), before any worker could drop it.
      expect(await cellsLeft(redis, stack.prefix)).toBe(0);
    } finally {
      redis.disconnect();
    }

    const worker = await stack.addWorker();
    expect(await client.exec('late', { title: 'now', code: 'return 2' })).toMatchObject({ status: 'completed', value: 2 });
    // The first cell never ran, so its key was not consumed (SPEC §2): the repeat runs it, once.
    const repeat = await client.exec('late', { title: 'late', code: 'return 1' }, { idempotencyKey: 'late-1' });
    expect(repeat).toMatchObject({ status: 'completed', value: 1 });
    expect(await client.exec('late', { title: 'late', code: 'return 1' }, { idempotencyKey: 'late-1' })).toEqual(repeat);
    const page = await client.events('late');
    expect(page.events.map((e) => e.type)).toEqual([
      'session.configured',
      'run.requested',
      'run.failed',
      'run.requested',
      'run.started',
      'run.completed',
      'run.requested',
      'run.started',
      'run.completed',
    ]);
    const after = stackRedis();
    try {
      // Every shard holds no cell (CODEMODE_QUEUE_SHARDS [16]).
      expect(await cellsLeft(after, stack.prefix)).toBe(0);
    } finally {
      after.disconnect();
    }
    expect(worker.alive).toBe(true);
  });
});

describe('an abort of a cell no worker has started', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers its exec at its start budget when the abort could not push the answer', async () => {
    const client = stack.client();
    await client.putSession('unpushed', { codeMode: { timeoutMs: 3000 } });
    const sentAt = Date.now();
    const exec = client.exec('unpushed', { title: 'unpushed', code: 'return 1' });
    const runId = await requestedRun(client, 'unpushed');
    // Its caller's channel not kept (a request of an earlier release, or a long key prefix).
    const redis = stackRedis();
    try {
      expect(await redis.hdel(new KeySpace(stack.prefix).run({ tenant: 'default', sessionId: 'unpushed' }, runId), 'replyTo')).toBe(1);
    } finally {
      redis.disconnect();
    }

    expect(await client.abort('unpushed', runId)).toMatchObject({ status: 'failed', code: 'aborted' });
    expect(await exec).toMatchObject({ status: 'failed', code: 'aborted', error: 'code mode execution aborted' });
    // At its start budget (3 s), not after its answer budget and the grace as well (8 s).
    expect(Date.now() - sentAt).toBeLessThan(5500);
  });

  it('answers its exec aborted at once, not at its start budget, and the cell never runs later', async () => {
    const client = stack.client();
    await client.putSession('queued', { codeMode: { timeoutMs: 30_000 } });
    const exec = client.exec('queued', { title: 'queued', code: 'return 1' });
    const runId = await requestedRun(client, 'queued');
    const aborted = { status: 'failed', code: 'aborted', error: 'code mode execution aborted' };

    const abortedAt = Date.now();
    expect(await client.abort('queued', runId)).toMatchObject(aborted);
    expect(await exec).toMatchObject(aborted);
    expect(Date.now() - abortedAt).toBeLessThan(3000);

    // A worker that comes now reads the cell's entry and drops it: the run stays aborted.
    await stack.addWorker();
    expect(await client.exec('queued', { title: 'next', code: 'return 2' })).toMatchObject({ status: 'completed', value: 2 });
    const types = (await client.events('queued')).events.filter((e) => e.runId === runId).map((e) => e.type);
    expect(types).toEqual(['run.requested', 'run.failed']);
  });
});

/** The id of the session's one run waiting for a worker, once its exec has recorded it. */
async function requestedRun(client: CodeModeClient, sessionId: string): Promise<string> {
  for (const until = Date.now() + 2000; Date.now() < until;) {
    const runId = (await client.listRuns(sessionId)).runs.find((run) => run.status === 'requested')?.runId;
    if (runId !== undefined) return runId;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the exec never recorded its run');
}

describe('Redis unreachable', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, redisUrl: `redis://127.0.0.1:${await freePort()}` });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers exec with runtime_unavailable and other routes with 503 + Retry-After', async () => {
    const client = stack.client();
    const res = await client.raw('POST', '/v1/sessions/s1/exec', { body: JSON.stringify({ title: 't', code: 'return 1' }) });
    expect(res.status).toBe(200);
    const result = CodeModeResultSchema.parse(res.body);
    expect(result).toMatchObject({ status: 'failed', code: 'runtime_unavailable' });
    expect(result.status === 'failed' && result.error).toMatch(/unavailable.*[Rr]etry/);

    const wait = await client.raw('POST', '/v1/sessions/s1/wait', { body: JSON.stringify({ runId: 'cm_x' }) });
    expect(wait.body).toMatchObject({ status: 'failed', code: 'runtime_unavailable' });

    for (const [method, path] of [
      ['GET', '/v1/sessions/s1'],
      ['PUT', '/v1/sessions/s1'],
      ['GET', '/v1/sessions/s1/events'],
    ] as const) {
      const r = await client.raw(method, path, method === 'PUT' ? { body: '{}' } : {});
      expect([path, r.status, r.headers.get('retry-after')]).toEqual([path, 503, expect.stringMatching(/^\d+$/)]);
      expect(r.body).toMatchObject({ code: 'runtime_unavailable' });
    }
    expect((await client.raw('GET', '/health/ready')).status).toBe(503);
    expect((await client.raw('GET', '/health/live')).status).toBe(200);
  });
});

describe('authentication and tenants', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: 'key-acme:acme,key-beta:beta' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('requires a known bearer key on /v1 but not on operational routes', async () => {
    const anonymous = stack.client();
    expect((await anonymous.raw('GET', '/v1/sessions/s1')).status).toBe(401);
    expect((await stack.client('wrong').raw('POST', '/v1/sessions/s1/exec', { body: '{}' })).status).toBe(401);
    expect((await anonymous.raw('GET', '/health/live')).status).toBe(200);
    // Routing is case-insensitive; authentication must be too.
    expect((await anonymous.raw('GET', '/V1/sessions/s1')).status).toBe(401);
    expect((await anonymous.raw('POST', '/V1/sessions/s1/shell/exec', { body: '{"command":"id"}' })).status).toBe(401);
  });

  it('keeps the same session id in two tenants apart', async () => {
    const acme = stack.client('key-acme');
    const beta = stack.client('key-beta');
    expect(await acme.exec('shared', { title: 't', code: 'return "acme"' })).toMatchObject({ value: 'acme' });
    expect((await beta.raw('GET', '/v1/sessions/shared')).status).toBe(404);
    expect((await beta.raw('GET', '/v1/sessions/shared/events')).status).toBe(404);
    const runId = (await acme.events('shared')).events[0].runId!;
    expect((await beta.raw('GET', `/v1/sessions/shared/runs/${runId}`)).status).toBe(404);
    expect(await beta.exec('shared', { title: 't', code: 'return "beta"' })).toMatchObject({ value: 'beta' });
    expect((await acme.events('shared')).events).toHaveLength(3);
  });
});
