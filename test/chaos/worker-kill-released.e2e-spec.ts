import type { CodeModeResult } from '@codemode/contracts';
import { cellsLeft } from '../utils/cell-backlog';
import { stackRedis, TestStack } from '../utils/test-stack';
import { allEvents, sleep, terminalsByRun } from './chaos-helpers';

jest.setTimeout(120_000);

/** Cell slots per worker, and one queue shard, so each worker holds at most this many cell jobs in BullMQ's count. */
const SLOTS = 3;
const LEASE_MS = 2000;
const CELLS = 16;
const TIMER_MS = 8000;

/**
 * SPEC §6 with SPEC §10 fate isolation: cells waiting on a timer give their cell slot back (so two
 * workers of 3 slots run 16 at once), yet their jobs stay locked by the worker: killed with -9, its
 * cells are recovered as any other — tool-free ones run again from the start, replay-safe ones are
 * rebuilt — each run ending once, and no cell job is left behind.
 */
describe('chaos: a worker killed with -9 while cells that gave their slot back wait on timers', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({
      workers: 2,
      env: {
        CODEMODE_LEASE_MS: String(LEASE_MS),
        CODEMODE_REPLY_GRACE_MS: '1000',
        CODEMODE_CELL_CONCURRENCY: String(SLOTS),
        CODEMODE_QUEUE_SHARDS: '1',
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('recovers every cell of the killed worker, each run ending once', async () => {
    const client = stack.client();
    const sid = 'released';
    await client.putSession(sid, { codeMode: { timeoutMs: 30_000 } });
    const sleeper = (n: number) => `await new Promise((r) => setTimeout(r, ${TIMER_MS})); return ${n};`;
    const answers: Promise<CodeModeResult>[] = Array.from({ length: CELLS }, (_, n) =>
      client.exec(sid, { title: `t${n}`, code: sleeper(n), restartSafe: n % 2 === 0 }),
    );
    // All of them start although the two workers have 2 × 3 slots: waiting cells give theirs back.
    const until = Date.now() + 6000;
    let started: { runId: string; worker: string }[] = [];
    while (started.length < CELLS && Date.now() < until) {
      await sleep(100);
      started = (await allEvents(client, sid))
        .filter((event) => event.type === 'run.started')
        .map((event) => ({ runId: event.runId!, worker: String(event.data.workerId) }));
    }
    expect(started).toHaveLength(CELLS);
    await sleep(1500);
    const perWorker = new Map<string, number>();
    for (const { worker } of started) perWorker.set(worker, (perWorker.get(worker) ?? 0) + 1);
    const [victimId, held] = [...perWorker.entries()].sort((a, b) => b[1] - a[1])[0];
    expect(held).toBeGreaterThan(SLOTS);
    const victim = stack.workers.find((w) => victimId.includes(`-${w.pid}-`));
    expect(victim).toBeDefined();
    await victim!.kill();

    const results = await Promise.all(answers);
    expect(results).toEqual(results.map((_, n) => expect.objectContaining({ status: 'completed', value: n })));
    const terminals = terminalsByRun(await allEvents(client, sid));
    for (const { runId } of started) expect(terminals.get(runId)?.map((event) => event.type)).toEqual(['run.completed']);
    const redis = stackRedis();
    try {
      // Every cell job or entry was finished, the killed worker's re-delivered ones included. A
      // stream entry of the killed worker is reclaimed on the survivor's own schedule (half a
      // lease, once the lease lapsed), possibly after its run was recovered another way and
      // answered; then dropped: within a few leases.
      const deadline = Date.now() + 5 * LEASE_MS;
      while ((await cellsLeft(redis, stack.prefix, 1)) > 0 && Date.now() < deadline) await sleep(200);
      expect(await cellsLeft(redis, stack.prefix, 1)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
