import type { Cluster, Redis } from 'ioredis';
import { SPEC_DEFAULT_LIMITS, SPEC_DEFAULT_SHELL } from '@codemode/config';
import type { CellJob, SessionRef } from '@codemode/contracts';
import { CellStream, KeySpace, LiveRunIndex, RunIds, RunLedger } from '@codemode/events';
import { scanKeys, stackRedis, TestStack } from './utils/test-stack';

jest.setTimeout(120_000);

/** The stack's lease, short so its live-run sweep (once a lease) comes soon. */
const LEASE_MS = 2_000;
/** CODEMODE_QUEUE_SHARDS of the stack (its default). */
const SHARDS = 16;

/**
 * SPEC §13 with `CODEMODE_CELL_DISPATCH=stream`: a new cell's request and its stream entry leave in
 * one socket write, and either may land alone. "A request whose entry never landed is abandoned as
 * not started by the sweep (§3's text), an entry whose request never landed is dropped by the worker
 * that reads it" — and so is an entry whose run was started or ended already (a duplicate).
 */
describe('stream dispatch: a request or an entry that lands alone', () => {
  let stack: TestStack;
  let redis: Redis | Cluster;
  let keys: KeySpace;
  let runs: RunLedger;
  let stream: CellStream;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1, env: { CODEMODE_CELL_DISPATCH: 'stream', CODEMODE_LEASE_MS: String(LEASE_MS) } });
    redis = stackRedis();
    keys = new KeySpace(stack.prefix);
    runs = new RunLedger(redis, keys);
    stream = new CellStream(redis, keys, SHARDS);
  });
  afterAll(async () => {
    await redis?.quit();
    await stack?.stop();
  });

  const spec = { title: 't', code: 'return 1', restartSafe: false, awaitResults: false, limits: { ...SPEC_DEFAULT_LIMITS } };
  const jobOf = (ref: SessionRef, runId: string): CellJob => ({
    ...ref,
    runId,
    spec: { ...spec, shell: { ...SPEC_DEFAULT_SHELL }, agentId: null },
    replyTo: 'nobody',
    requestedAt: Date.now(),
  });
  /** The entry's shard stream (its lane: the stack's tenant had one call in flight) is empty again: a worker read it and acknowledged it. */
  async function untilRead(ref: SessionRef): Promise<void> {
    const key = keys.cellStream(`cells-${stream.shardOf(ref)}`, 'first');
    const deadline = Date.now() + 30_000;
    while ((await redis.xlen(key)) > 0) {
      if (Date.now() > deadline) throw new Error('the entry was never read');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('an entry whose request never landed is dropped: no run, nothing written for its session', async () => {
    const ref = { tenant: 'default', sessionId: 'entry-alone' };
    const runId = await new RunIds(redis, keys).mint(ref);
    await stream.add(jobOf(ref, runId), 1);
    await untilRead(ref);
    expect(await runs.get(ref, runId)).toBeNull();
    expect(await scanKeys(redis, `${stack.prefix}:*${ref.sessionId}*`)).toEqual([]);
  });

  it('an entry whose run ended already (a duplicate) is dropped without writing to its run', async () => {
    const client = stack.client();
    const sid = 'entry-duplicate';
    const first = await client.exec(sid, { title: 'once', code: 'return 41 + 1' });
    expect(first).toMatchObject({ status: 'completed', value: 42 });
    const ref = { tenant: 'default', sessionId: sid };
    const [ended] = (await client.listRuns(sid, { limit: 1 })).runs;
    const events = keys.events(ref);
    const before = await redis.xlen(events);
    await stream.add(jobOf(ref, ended.runId), 1);
    await untilRead(ref);
    expect(await redis.xlen(events)).toBe(before);
    expect((await client.getRun(sid, ended.runId)).lastResult).toMatchObject({ status: 'completed', value: 42 });
  });

  it('a request whose entry never landed is abandoned by the sweep with §3’s not-started text', async () => {
    const ref = { tenant: 'default', sessionId: 'request-alone' };
    const runId = await new RunIds(redis, keys).mint(ref);
    await runs.request(ref, runId, spec);
    // Its live-run entry as the API writes it, due already (its answer's deadline passed).
    await new LiveRunIndex(redis, keys).add(ref, runId, Date.now() - 1);
    const deadline = Date.now() + 30_000;
    while ((await runs.get(ref, runId))?.status === 'requested') {
      if (Date.now() > deadline) throw new Error('never abandoned');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await stack.client().getRun(ref.sessionId, runId)).lastResult).toMatchObject({
      status: 'failed',
      code: 'runtime_unavailable',
      error: 'no worker started the cell within its budget; it was not run.',
    });
  });
});

describe('stream dispatch: an idempotent repeat leaves no entry for a worker', () => {
  let stack: TestStack;
  let redis: Redis | Cluster;

  beforeAll(async () => {
    // No worker: every entry stays on its stream to be looked at.
    stack = await TestStack.start({ workers: 0, env: { CODEMODE_CELL_DISPATCH: 'stream' } });
    redis = stackRedis();
  });
  afterAll(async () => {
    await redis?.quit();
    await stack?.stop();
  });

  it('withdraws the entry sent beside a repeated Idempotency-Key: only the first exec’s entry waits', async () => {
    const client = stack.client();
    const keys = new KeySpace(stack.prefix);
    const ref = { tenant: 'default', sessionId: 'repeat' };
    // Both execs count two calls in flight at most: the first lane.
    const key = keys.cellStream(`cells-${new CellStream(redis, keys, SHARDS).shardOf(ref)}`, 'first');
    const exec = () => client.exec(ref.sessionId, { title: 'once', code: 'return 1' }, { idempotencyKey: 'k-1' }).catch(() => undefined);
    // Never answered while no worker runs; the stack's stop ends them.
    void exec();
    const deadline = Date.now() + 10_000;
    while ((await redis.xlen(key)) === 0) {
      if (Date.now() > deadline) throw new Error('the first entry never landed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    void exec();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const [run] = (await client.listRuns(ref.sessionId, { limit: 5 })).runs;
    const entries = (await redis.xrange(key, '-', '+')).map(([, fields]) => (JSON.parse(fields[1]) as CellJob).runId);
    expect(entries).toEqual([run.runId]);
  });
});
