import { Queue } from 'bullmq';
import { scanKeys, stackRedis, TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "API": sessions, stores, tool registrations and idempotency keys expire after
 * CODEMODE_SESSION_TTL_SECONDS without a write; no key of the service lives forever, and a
 * worker's own queue is removed once the worker is gone. The exceptions are the ones
 * libs/events/ARCHITECTURE.md lists ("Every Redis key and what removes it").
 */

jest.setTimeout(90_000);

const LEASE_MS = 1000;
/** Janitor: 3 leases past the last beat, plus a sweep interval (one lease), plus slack. */
const REMOVAL_WITHIN_MS = LEASE_MS * 5 + 5000;

let stack: TestStack;
let redis: ReturnType<typeof stackRedis>;

beforeAll(async () => {
  stack = await TestStack.start({
    workers: 0,
    env: { CODEMODE_SESSION_TTL_SECONDS: '60', CODEMODE_LEASE_MS: String(LEASE_MS) },
  });
  await stack.addWorker({ CODEMODE_WORKER_ID: 'exp-w1' });
  redis = stackRedis();
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

const scan = (pattern: string): Promise<string[]> => scanKeys(redis, pattern);

/** Keys documented as kept without a TTL, each removed by its own rule (or kept on purpose). */
function documentedException(key: string, liveWorkers: string[]): boolean {
  const p = stack.prefix;
  if ([`${p}:tenant-uids`, `${p}:tenant-uids:next`, `${p}:worker-queues`].includes(key)) return true;
  // The parts of the parked-run and live-run indexes.
  if (new RegExp(`^${p}:(parked|live):\\{${p}:index-\\d+\\}$`).test(key)) return true;
  // The shared queues' own keys (meta, id, events, marker…): one set per deployment.
  if (new RegExp(`^\\{${p}:(cells-\\d+|shell)\\}:(cells-\\d+|shell):[a-z-]+$`).test(key)) return true;
  // The shard streams of new cells, both lanes (deployment infrastructure like the queues; entries leave when acknowledged).
  if (new RegExp(`^\\{${p}:cells-\\d+\\}:stream(:rest)?$`).test(key)) return true;
  // A live worker's own queue.
  return liveWorkers.some((id) => key.startsWith(`{${p}:worker-${id}}:worker-${id}:`));
}

async function waitUntil(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

/** A job nobody will take soon (delayed), so the queue surely has keys. */
async function queueJob(workerId: string): Promise<void> {
  const queue = new Queue(`worker-${workerId}`, {
    connection: stackRedis({ maxRetriesPerRequest: null }),
    prefix: `{${stack.prefix}:worker-${workerId}}`,
  });
  await queue.add('abort-run', { tenant: 'x', sessionId: 'x', runId: 'x', replyTo: '' }, { delay: 600_000 });
  await queue.close();
  await queue.disconnect();
}

const queueKeys = (workerId: string) => scan(`{${stack.prefix}:worker-${workerId}}:*`);

describe('key expiry', () => {
  it('gives every key a TTL after session PUT, exec, store write, tools PUT and an idempotent exec', async () => {
    const client = stack.client();
    await client.putSession('exp-1', { agentId: 'agent-1' });
    expect(await client.exec('exp-1', { title: 'plain', code: 'return 1 + 1' })).toMatchObject({ status: 'completed', value: 2 });
    expect(await client.exec('exp-1', { title: 'store', code: "await store('k', {n: 1}); return await load('k');" })).toMatchObject({
      value: { n: 1 },
    });
    await client.putTools('exp-1', [
      { name: 'lookup', description: 'Look up', inputSchema: { type: 'object' }, endpoint: 'https://example.com/hook' },
    ]);
    const first = await client.exec('exp-1', { title: 'once', code: 'return 7' }, { idempotencyKey: 'idem-1' });
    expect(await client.exec('exp-1', { title: 'once', code: 'return 7' }, { idempotencyKey: 'idem-1' })).toEqual(first);
    expect(await client.exec('exp-2', { title: 'other', code: 'return 3' })).toMatchObject({ status: 'completed' });

    const keys = [...(await scan(`${stack.prefix}:*`)), ...(await scan(`{${stack.prefix}:*`))];
    expect(keys.some((k) => k.endsWith(':store'))).toBe(true);
    expect(keys.some((k) => k.endsWith(':tools'))).toBe(true);
    expect(keys.some((k) => k.includes(':idem:'))).toBe(true);
    // No record per run of where it is (run ids carry their session); the run-id key lives 30 days
    // unless an API refreshes it.
    expect(keys.filter((k) => k.startsWith(`${stack.prefix}:runloc:`))).toEqual([]);
    expect((await redis.pttl(`${stack.prefix}:run-id-key`)) / 1000).toBeLessThanOrEqual(30 * 86_400);
    const forever: string[] = [];
    for (const key of keys) {
      if ((await redis.pttl(key)) === -1 && !documentedException(key, ['exp-w1'])) forever.push(key);
    }
    expect(forever).toEqual([]);
    for (const key of keys.filter((k) => k.startsWith(`${stack.prefix}:{`))) {
      const pttl = await redis.pttl(key);
      if (pttl !== -2) expect([key, pttl > 0]).toEqual([key, true]);
    }
  });

  it('removes a worker’s own queue when it stops cleanly', async () => {
    await stack.addWorker({ CODEMODE_WORKER_ID: 'exp-w2' });
    const worker = stack.workers[stack.workers.length - 1];
    await queueJob('exp-w2');
    expect((await queueKeys('exp-w2')).length).toBeGreaterThan(0);
    expect(await worker.stop()).toBe(0);
    expect(await waitUntil(async () => (await queueKeys('exp-w2')).length === 0, REMOVAL_WITHIN_MS)).toBe(true);
    expect(await redis.zscore(`${stack.prefix}:worker-queues`, 'exp-w2')).toBeNull();
  });

  it('removes the queue of a worker that died, within the grace, jobs and all', async () => {
    await stack.addWorker({ CODEMODE_WORKER_ID: 'exp-w3' });
    const worker = stack.workers[stack.workers.length - 1];
    await worker.kill();
    await queueJob('exp-w3');
    expect((await queueKeys('exp-w3')).length).toBeGreaterThan(0);
    expect(await waitUntil(async () => (await queueKeys('exp-w3')).length === 0, REMOVAL_WITHIN_MS)).toBe(true);
    expect(await redis.zscore(`${stack.prefix}:worker-queues`, 'exp-w3')).toBeNull();
    // The live worker's queue is untouched.
    expect(await redis.zscore(`${stack.prefix}:worker-queues`, 'exp-w1')).not.toBeNull();
  });
});
