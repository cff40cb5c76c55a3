import type { BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { ParkedRunBusyError, ParkedRunNotFoundError, UnknownBridgeCallError } from '../errors';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, tick, valueOf, waiting } from './test-support';

/** A host answering `callValue` tools by name: `echo` resolves, `boom` rejects, `slow` after 40 ms, `client` is platform-answered. */
function testHost(calls: BridgeCall[] = [], signals: AbortSignal[] = []): BridgeHost {
  return {
    async dispatch(call, signal) {
      calls.push(call);
      signals.push(signal);
      const { tool: name, input } = call.args as { tool: string; input: unknown };
      if (name === 'boom') throw new RangeError(`boom ${JSON.stringify(input)}`);
      if (name === 'slow') await tick(40);
      return { name, input };
    },
    answeredByPlatform: (call) => (call.args as { tool?: unknown }).tool === 'client',
  };
}

const TOOLS = testCatalog(['echo', 'boom', 'slow', 'client']);

describe('SandboxPool: suspension', () => {
  let pool: SandboxPool;
  const lost: string[][] = [];
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2 });
    pool.onRunsLost((runIds) => lost.push(runIds));
  });
  afterAll(async () => {
    await pool.close();
  });

  it('parks at yield_control and resumes with the yield resolved to undefined', async () => {
    const request = cell('text("before"); const r = await yield_control("checkpoint"); text("after"); return { r: r === undefined }');
    const parked = waiting(await pool.run(request));
    expect(parked).toMatchObject({ reason: 'yield', pending: [{ id: 'bridge:yield:1', method: 'yield', args: ['checkpoint'] }] });
    expect(parked.output).toEqual([{ type: 'text', text: 'before' }]);
    expect(parked.snapshotBytes).toBeGreaterThan(0);
    expect(parked.snapshotBytes % 4096).toBe(0);
    expect(pool.parkedCount()).toBe(1);
    const done = await pool.resume(request.runId, { timeoutMs: 1000 });
    expect(valueOf(done)).toBe('{"r":true}');
    expect(done.output).toEqual([{ type: 'text', text: 'after' }]);
    expect(pool.parkedCount()).toBe(0);
    await expect(pool.resume(request.runId, { timeoutMs: 1000 })).rejects.toBeInstanceOf(ParkedRunNotFoundError);
  });

  it('drains sequential awaited timers and tool calls in one run', async () => {
    const code =
      'let n = 0; for (let i = 0; i < 30; i++) { await new Promise((r) => setTimeout(r, 1)); n += (await echo(i)).input; } return n';
    expect(valueOf(await pool.run({ ...cell(code), catalogJson: TOOLS }, testHost()))).toBe(String((29 * 30) / 2));
  });

  it('parks a timer longer than the budget as pending_tools, and the timer keeps running while parked', async () => {
    const request = cell('await new Promise((r) => setTimeout(r, 400)); return "woke"', { timeoutMs: 150 });
    const parked = waiting(await pool.run(request));
    expect(parked.reason).toBe('pending_tools');
    expect(parked.pending).toEqual([{ id: 'bridge:sleep:1', method: 'sleep', args: [400] }]);
    await tick(350);
    const started = performance.now();
    expect(valueOf(await pool.resume(request.runId, { timeoutMs: 1000 }))).toBe('"woke"');
    expect(performance.now() - started).toBeLessThan(150);
  });

  it('does not complete before detached calls and race losers finish', async () => {
    const calls: BridgeCall[] = [];
    const code = 'slow("detached").then((r) => text(r.input)); const w = await Promise.race([echo("fast"), slow("loser")]); return w.input';
    const outcome = await pool.run({ ...cell(code), catalogJson: TOOLS }, testHost(calls));
    expect(valueOf(outcome)).toBe('"fast"');
    expect(outcome.output).toEqual([{ type: 'text', text: 'detached' }]);
    expect(calls.map((call) => call.id)).toEqual(['bridge:callValue:1', 'bridge:callValue:2', 'bridge:callValue:3']);
  });

  it('fails the cell on an unawaited rejected call; a handled one is fine', async () => {
    const unawaited = failure(await pool.run({ ...cell('boom(1); await echo(2); return "ok"'), catalogJson: TOOLS }, testHost()));
    expect(unawaited.error.split('\n')[0]).toBe('RangeError: boom 1');
    const late = 'const p = boom(2); await new Promise((r) => setTimeout(r, 30)); try { await p } catch (e) { return e.message }';
    expect(valueOf(await pool.run({ ...cell(late), catalogJson: TOOLS }, testHost()))).toBe('"boom 2"');
    expect(valueOf(await pool.run({ ...cell('boom(3).catch(() => {}); return 1'), catalogJson: TOOLS }, testHost()))).toBe('1');
  });

  it('queues calls beyond maxPendingToolCalls instead of failing', async () => {
    const outcome = await pool.run(
      {
        ...cell('return (await Promise.all([1, 2, 3].map((i) => slow(i)))).map((r) => r.input)', { maxPendingToolCalls: 2 }),
        catalogJson: TOOLS,
      },
      testHost(),
    );
    expect(valueOf(outcome)).toBe('[1,2,3]');
  });

  it('returns output incrementally across resumes and keeps the console cap per run', async () => {
    // Each entry is ~4 KiB of console (8 × 500 units); the run-wide cap (16384) is hit in the third leg.
    const code =
      'for (let i = 0; i < 3; i++) { for (let k = 0; k < 2; k++) console.log(...Array(8).fill("x".repeat(500))); await yield_control(); } return 1';
    const request = cell(code);
    const legs = [waiting(await pool.run(request))];
    legs.push(waiting(await pool.resume(request.runId, { timeoutMs: 1000 })));
    legs.push(waiting(await pool.resume(request.runId, { timeoutMs: 1000 })));
    const last = await pool.resume(request.runId, { timeoutMs: 1000 });
    expect(valueOf(last)).toBe('1');
    expect(legs.map((leg) => leg.output.length)).toEqual([2, 2, 1]);
    expect(legs[2].output).toEqual([{ type: 'text', text: '[console output truncated]' }]);
    expect(last.output).toEqual([]);
    expect(last.consoleTruncated).toBe(true);
  });

  it('fails a park over maxSnapshotBytes', async () => {
    const outcome = await pool.run(cell('await yield_control()', { maxSnapshotBytes: 1024 }));
    expect(failure(outcome)).toEqual({ code: 'snapshot_limit_exceeded', phase: 'guest', error: 'code mode snapshot limit exceeded' });
    expect(pool.parkedCount()).toBe(0);
  });

  it('discard aborts pending host work and cancels timers; the run cannot be resumed', async () => {
    const signals: AbortSignal[] = [];
    const request = {
      ...cell('setTimeout(() => text("fired"), 5000); await slow(1)', { timeoutMs: 100 }),
      catalogJson: testCatalog(['slow']),
    };
    const host: BridgeHost = { dispatch: (call, signal) => (signals.push(signal), new Promise(() => undefined)) };
    expect(waiting(await pool.run(request, host)).pending.map((call) => call.id)).toEqual(['bridge:sleep:1', 'bridge:callValue:1']);
    expect(pool.discard(request.runId)).toBe(true);
    expect(signals[0].aborted).toBe(true);
    expect(pool.discard(request.runId)).toBe(false);
    await expect(pool.resume(request.runId, { timeoutMs: 100 })).rejects.toBeInstanceOf(ParkedRunNotFoundError);
  });

  it('refuses a concurrent resume of the same run', async () => {
    const request = cell('await yield_control(); await new Promise((r) => setTimeout(r, 50)); return 2');
    waiting(await pool.run(request));
    const first = pool.resume(request.runId, { timeoutMs: 1000 });
    await expect(pool.resume(request.runId, { timeoutMs: 1000 })).rejects.toBeInstanceOf(ParkedRunBusyError);
    expect(valueOf(await first)).toBe('2');
  });

  it('parks at once on a platform-answered call; settle + resume completes with the settled value', async () => {
    const request = {
      ...cell('const a = await echo(1); const b = await client({ q: 1 }); return [a.input, b]', { timeoutMs: 5000 }),
      catalogJson: TOOLS,
    };
    const started = performance.now();
    const parked = waiting(await pool.run(request, testHost()));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(parked).toMatchObject({
      reason: 'pending_tools',
      pending: [{ id: 'bridge:callValue:2', method: 'callValue', args: { tool: 'client', input: { q: 1 } } }],
    });
    expect(() => pool.settle(request.runId, 'bridge:callValue:9', { ok: true, value: 1 })).toThrow(UnknownBridgeCallError);
    expect(() => pool.settle('nope', 'bridge:callValue:2', { ok: true, value: 1 })).toThrow(ParkedRunNotFoundError);
    pool.settle(request.runId, 'bridge:callValue:2', { ok: true, value: { answer: 42 } });
    expect(valueOf(await pool.resume(request.runId, { timeoutMs: 1000 }))).toBe('[1,{"answer":42}]');
  });

  it('never parks with awaitResults: yields resolve at once', async () => {
    const outcome = await pool.run(cell('await yield_control(); await yield_control(); return 3', {}, true));
    expect(valueOf(outcome)).toBe('3');
    const beyondBudget = cell('await new Promise((r) => setTimeout(r, 250)); return "late"', { timeoutMs: 100 }, true);
    expect(valueOf(await pool.run(beyondBudget))).toBe('"late"');
  });
});

describe('SandboxPool: parked-run capacity and lost threads', () => {
  it('fails the park beyond maxParked with the exact string while a resuming run keeps its slot', async () => {
    const pool = await SandboxPool.start({ threads: 1, maxParked: 2 });
    try {
      const a = cell('await yield_control(); await yield_control(); return "a"');
      const b = cell('await yield_control(); return "b"');
      waiting(await pool.run(a));
      waiting(await pool.run(b));
      expect(failure(await pool.run(cell('await yield_control()')))).toEqual({
        code: 'invalid_input',
        phase: 'host',
        error: 'too many suspended code mode runs.',
      });
      expect(pool.stats().parked).toBe(2);
      waiting(await pool.resume(a.runId, { timeoutMs: 1000 }));
      expect(valueOf(await pool.resume(a.runId, { timeoutMs: 1000 }))).toBe('"a"');
      waiting(await pool.run(cell('await yield_control()')));
    } finally {
      await pool.close();
    }
  });

  it('holds 64 parked runs (the default cap) and resumes them all', async () => {
    const pool = await SandboxPool.start({ threads: 2 });
    try {
      const requests = Array.from({ length: 64 }, (_, i) =>
        cell(`const o = { i: ${i}, s: "y".repeat(1000) }; await yield_control(); return o.i`),
      );
      for (const request of requests) waiting(await pool.run(request));
      expect(pool.stats()).toMatchObject({ threads: 2, parked: 64 });
      expect(failure(await pool.run(cell('await yield_control()'))).error).toBe('too many suspended code mode runs.');
      const values = await Promise.all(requests.map((request) => pool.resume(request.runId, { timeoutMs: 5000 })));
      expect(values.map(valueOf)).toEqual(requests.map((_, i) => String(i)));
      expect(pool.parkedCount()).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('reports the runs parked in a thread the watchdog terminated', async () => {
    const pool = await SandboxPool.start({ threads: 1, watchdogGraceMs: 200 });
    const lost: Array<[string[], string]> = [];
    pool.onRunsLost((runIds, reason) => lost.push([runIds, reason]));
    try {
      const parked = cell('await yield_control()');
      waiting(await pool.run(parked));
      const outcome = await pool.run(cell('return new Array(1e8).join(",").length', { timeoutMs: 300 }));
      expect(failure(outcome).code).toBe('timeout');
      expect(lost).toEqual([[[parked.runId], expect.stringContaining('terminated') as string]]);
      expect(pool.parkedCount()).toBe(0);
      await expect(pool.resume(parked.runId, { timeoutMs: 100 })).rejects.toBeInstanceOf(ParkedRunNotFoundError);
    } finally {
      await pool.close();
    }
  });
});
