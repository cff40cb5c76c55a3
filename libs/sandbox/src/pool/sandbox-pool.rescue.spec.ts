import type { BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, tick, valueOf, waiting } from './test-support';

const TIMEOUT = { code: 'timeout', phase: 'guest', error: 'code mode timeout exceeded' };
/** The native search QuickJS's interrupt handler cannot stop (issue 23): only terminating its thread does. */
const STUCK = 'const s = "a".repeat(2e7); return s.indexOf("a".repeat(5000) + "b")';
const TOOLS = testCatalog(['slow']);

/** `slow(ms)` resolves after `ms` with `{slept: ms}`; every dispatch is recorded. */
function slowHost(calls: BridgeCall[]): BridgeHost {
  return {
    async dispatch(call) {
      calls.push(call);
      const { input } = call.args as { input: number };
      await tick(input);
      return { slept: input };
    },
  };
}

/**
 * SPEC §10 (sandbox threads): when the watchdog terminates a thread for one run's native overrun,
 * every other run that had a VM there goes on elsewhere and completes, its host calls neither lost
 * nor made twice. One thread, so every run shares the culprit's.
 */
describe('SandboxPool: runs rescued from a terminated thread', () => {
  let pool: SandboxPool;
  const logs: string[] = [];
  const lost: string[][] = [];
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1, logger: (level, msg) => logs.push(`${level}: ${msg}`) });
    pool.onRunsLost((runIds) => lost.push(runIds));
  });
  afterAll(async () => {
    await pool.close();
  });

  /** One culprit, once the replacement of the last terminated thread is up (a 300 ms cell would not wait for its spawn). */
  async function stuck(): Promise<void> {
    for (let i = 0; i < 100 && pool.stats().idle + pool.stats().busy < 1; i++) await tick(50);
    expect(failure(await pool.run(cell(STUCK, { timeoutMs: 300 })))).toEqual(TIMEOUT);
  }

  it('a leg waiting on a host call goes on on a new thread, with its output, and the call is made once', async () => {
    const calls: BridgeCall[] = [];
    const code =
      'text("before"); const t = new Promise((r) => setTimeout(() => r("timer"), 1200)); const a = await slow(1500); text("after"); return [a.slept, await t]';
    const victim = pool.run({ ...cell(code, { timeoutMs: 10_000 }), catalogJson: TOOLS }, slowHost(calls));
    await tick(100);
    await stuck();
    const outcome = await victim;
    expect(valueOf(outcome)).toBe('[1500,"timer"]');
    expect(outcome.output).toEqual([
      { type: 'text', text: 'before' },
      { type: 'text', text: 'after' },
    ]);
    expect(calls.map((call) => call.id)).toEqual(['bridge:callValue:1']);
    expect(logs).toContain('info: runs rescued from a terminated sandbox thread');
  });

  it('a settlement that arrives while the thread is stuck is applied on the new thread', async () => {
    const calls: BridgeCall[] = [];
    const code = 'const a = await slow(200); const b = await slow(300); return a.slept + b.slept';
    const victim = pool.run({ ...cell(code, { timeoutMs: 10_000 }), catalogJson: TOOLS }, slowHost(calls));
    await tick(50);
    await stuck();
    expect(valueOf(await victim)).toBe('500');
    expect(calls.map((call) => call.id)).toEqual(['bridge:callValue:1', 'bridge:callValue:2']);
  });

  it('a cell sent to the thread while it is stuck runs on the next one', async () => {
    const culprit = pool.run(cell(STUCK, { timeoutMs: 300 }));
    await tick(100);
    const victim = pool.run(cell('return 6 * 7', { timeoutMs: 20_000 }));
    expect(failure(await culprit)).toEqual(TIMEOUT);
    expect(valueOf(await victim)).toBe('42');
  });

  it('a parked run resumed while the thread is stuck is rebuilt from its rescue image', async () => {
    const request = cell('const r = await yield_control("x"); text("resumed"); return r === undefined', { timeoutMs: 5000 });
    expect(waiting(await pool.run(request)).reason).toBe('yield');
    // Another run executes here, so the parked one gets its rescue image first.
    const culprit = pool.run(cell(STUCK, { timeoutMs: 300 }));
    await tick(100);
    const resumed = pool.resume(request.runId, { timeoutMs: 5000 });
    expect(failure(await culprit)).toEqual(TIMEOUT);
    const outcome = await resumed;
    expect(valueOf(outcome)).toBe('true');
    expect(outcome.output).toEqual([{ type: 'text', text: 'resumed' }]);
    expect(pool.parkedCount()).toBe(0);
  });

  it('a rescued run discarded while it waits for another thread ends aborted, its host call aborted', async () => {
    const signals: AbortSignal[] = [];
    const host: BridgeHost = {
      dispatch: (_call, signal) => {
        signals.push(signal);
        return tick(5000).then(() => 1);
      },
    };
    const request = { ...cell('return await slow(1)', { timeoutMs: 10_000 }), catalogJson: TOOLS };
    const victim = pool.run(request, host);
    await tick(100);
    await stuck();
    // The thread's replacement is still starting: the rescued run waits in the pool's queue.
    expect(pool.holds(request.runId)).toBe(true);
    expect(pool.discard(request.runId)).toBe(true);
    expect(failure(await victim)).toEqual({ code: 'aborted', phase: 'host', error: 'code mode execution aborted' });
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
    expect(pool.holds(request.runId)).toBe(false);
  });

  it('several culprits in a row: the same run is rescued each time and completes', async () => {
    const calls: BridgeCall[] = [];
    const code = 'let n = 0; for (let i = 0; i < 3; i++) n += (await slow(700)).slept; return n';
    const victim = pool.run({ ...cell(code, { timeoutMs: 20_000 }), catalogJson: TOOLS }, slowHost(calls));
    await tick(50);
    for (let i = 0; i < 3; i++) await stuck();
    expect(valueOf(await victim)).toBe('2100');
    expect(calls).toHaveLength(3);
    expect(lost).toEqual([]);
  });
});
