import type { LegJournal } from '@codemode/contracts';
import { bridgeQueueLimitMessage, type BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { UnknownBridgeCallError } from '../errors';
import { buildReplayPlan, type RecordedToolCall } from '../replay/replay-plan';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, tick, valueOf, waiting } from './test-support';

/**
 * A host that answers `echo` after `delayMs` and tracks how many calls it holds at once;
 * `client` calls are answered by the platform only. Every answered call is recorded as the
 * worker's log would record it (for replays).
 */
function countingHost(delayMs = 5) {
  const made: BridgeCall[] = [];
  const record = new Map<string, RecordedToolCall>();
  const stats = { inFlight: 0, maxInFlight: 0 };
  const host: BridgeHost = {
    async dispatch(call) {
      made.push(call);
      const { tool, input } = call.args as { tool: string; input: unknown };
      if (tool === 'client') return new Promise(() => undefined);
      stats.inFlight += 1;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      await tick(delayMs);
      stats.inFlight -= 1;
      record.set(call.id, { tool, inputJson: JSON.stringify(input ?? {}), outcome: { ok: true, payload: JSON.stringify(input) } });
      return input;
    },
    answeredByPlatform: (call) => (call.args as { tool?: unknown }).tool === 'client',
  };
  return { host, made, record, stats };
}

const TOOLS = testCatalog(['echo', 'client'], { replaySafe: ['echo'] });

describe('SandboxPool: the bridge queue (SPEC §3)', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('runs Promise.all over 100 calls with 4 in-flight slots, dispatching in request order', async () => {
    const { host, made, stats } = countingHost();
    const code = 'const r = await Promise.all(Array.from({ length: 100 }, (_, i) => echo(i))); return r.reduce((a, b) => a + b, 0)';
    const outcome = await pool.run({ ...cell(code, { maxPendingToolCalls: 4 }), catalogJson: TOOLS }, host);
    expect(valueOf(outcome)).toBe(String((99 * 100) / 2));
    expect(stats.maxInFlight).toBe(4);
    expect(made.map((call) => call.id)).toEqual(Array.from({ length: 100 }, (_, i) => `bridge:callValue:${i + 1}`));
  });

  it('admits maxPendingToolCalls + 128 requests and fails the next with the exact message, even when caught', async () => {
    const { host } = countingHost();
    const fits = 'return (await Promise.all(Array.from({ length: 132 }, (_, i) => echo(i)))).length';
    expect(valueOf(await pool.run({ ...cell(fits, { maxPendingToolCalls: 4 }), catalogJson: TOOLS }, host))).toBe('132');
    const over =
      'const all = []; for (let i = 0; i < 200; i++) { try { all.push(echo(i)); } catch (e) {} } await Promise.all(all); return "done"';
    const outcome = failure(await pool.run({ ...cell(over, { maxPendingToolCalls: 4 }), catalogJson: TOOLS }, host));
    expect(outcome).toEqual({
      code: 'invalid_input',
      phase: 'guest',
      error:
        'code mode bridge queue limit exceeded (128 ordinary requests queued; 4 in-flight slots). Await smaller batches before creating more tool calls or timers.',
    });
    expect(bridgeQueueLimitMessage(4)).toBe(outcome.error);
  });

  it('counts timers with tool calls, starts a queued timer when its slot frees, and clears a queued timer', async () => {
    const { host, made } = countingHost(20);
    const code = `
      const order = [];
      const calls = [echo("a").then(() => order.push("a")), echo("b").then(() => order.push("b"))];
      const t = setTimeout(() => order.push("cleared"), 0);
      setTimeout(() => order.push("timer"), 0);
      clearTimeout(t);
      await Promise.all(calls);
      await new Promise((r) => setTimeout(r, 10));
      return order`;
    const outcome = await pool.run({ ...cell(code, { maxPendingToolCalls: 2 }), catalogJson: TOOLS }, host);
    // Both slots were the calls': the 0 ms timer started only once a call's slot freed, so a call
    // settled before it fired (the other call may settle on either side of it, as the machine's
    // load has it). The cleared one never fired.
    const order = JSON.parse(valueOf(outcome)) as string[];
    expect([...order].sort()).toEqual(['a', 'b', 'timer']);
    expect(order[0]).not.toBe('timer');
    expect(made).toHaveLength(2);
  });

  it('parks at once when the in-flight calls are platform-answered, listing queued calls too; queued calls start while parked', async () => {
    const { host, made } = countingHost();
    const code = 'const r = await Promise.all([client(1), client(2), echo(3), echo(4)]); return r';
    const request = { ...cell(code, { maxPendingToolCalls: 2, timeoutMs: 5000 }), catalogJson: TOOLS };
    const started = performance.now();
    const parked = waiting(await pool.run(request, host));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(parked.reason).toBe('pending_tools');
    expect(parked.pending.map((call) => call.id)).toEqual([
      'bridge:callValue:1',
      'bridge:callValue:2',
      'bridge:callValue:3',
      'bridge:callValue:4',
    ]);
    // Only the two in flight were dispatched; the queued ones cannot be answered yet.
    expect(made.map((call) => call.id)).toEqual(['bridge:callValue:1', 'bridge:callValue:2']);
    expect(pool.awaitsPlatform(request.runId, 'bridge:callValue:3')).toBe(false);
    expect(() => pool.settle(request.runId, 'bridge:callValue:3', { ok: true, value: 3 })).toThrow(UnknownBridgeCallError);
    pool.settle(request.runId, 'bridge:callValue:1', { ok: true, value: 'one' });
    pool.settle(request.runId, 'bridge:callValue:2', { ok: true, value: 'two' });
    // The freed slots start the queued calls while the run is still parked.
    for (let i = 0; i < 50 && made.length < 4; i++) await tick(10);
    expect(made.map((call) => call.id)).toEqual(['bridge:callValue:1', 'bridge:callValue:2', 'bridge:callValue:3', 'bridge:callValue:4']);
    expect(valueOf(await pool.resume(request.runId, { timeoutMs: 1000 }, host))).toBe('["one","two",3,4]');
  });

  it('rebuilds a restartSafe run that parked with queued calls; queued calls are made once, after the replay', async () => {
    const code = `
      const first = await Promise.all([1, 2, 3, 4, 5].map((i) => echo(i)));
      await yield_control("half");
      const second = await Promise.all([6, 7, 8, 9, 10].map((i) => echo(i)));
      setTimeout(() => {}, 0);
      await yield_control("again");
      return [...first, ...second];`;
    const live = countingHost();
    const request = { ...cell(code, { maxPendingToolCalls: 2 }), catalogJson: TOOLS, restartSafe: true, seed: [1, 2, 3, 4] };
    const journals: LegJournal[] = [];
    const first = waiting(await pool.run(request, live.host));
    if (first.journal) journals.push(first.journal);
    const second = waiting(await pool.resume(request.runId, { timeoutMs: 2000 }, live.host));
    if (second.journal) journals.push(second.journal);
    expect(journals).toHaveLength(2);
    expect(live.made).toHaveLength(10);
    expect(live.stats.maxInFlight).toBe(2);
    pool.discard(request.runId);

    const replay = countingHost();
    const rebuilt = {
      ...cell(code, { maxPendingToolCalls: 2 }),
      catalogJson: TOOLS,
      restartSafe: true,
      seed: [1, 2, 3, 4],
      replay: buildReplayPlan(journals, live.record),
    };
    expect(valueOf(await pool.run(rebuilt, replay.host))).toBe('[1,2,3,4,5,6,7,8,9,10]');
    expect(replay.made).toEqual([]);
  });

  it('replays a run that parked with calls still queued and answers or re-makes them in order', async () => {
    const code = 'const r = await Promise.all([echo(1), client(2), client(3), echo(4)]); return r';
    const live = countingHost();
    const request = {
      ...cell(code, { maxPendingToolCalls: 2, timeoutMs: 3000 }),
      catalogJson: testCatalog(['echo', 'client'], { replaySafe: ['echo', 'client'] }),
      restartSafe: true,
      seed: [4, 3, 2, 1],
    };
    const parked = waiting(await pool.run(request, live.host));
    expect(parked.pending.map((call) => call.id)).toEqual(['bridge:callValue:2', 'bridge:callValue:3', 'bridge:callValue:4']);
    expect(parked.journal?.open).toEqual(['bridge:callValue:2', 'bridge:callValue:3', 'bridge:callValue:4']);
    pool.discard(request.runId);

    // The log answered both client calls before the worker went away; echo(4) was still queued.
    const record = new Map(live.record);
    record.set('bridge:callValue:2', { tool: 'client', inputJson: '2', outcome: { ok: true, payload: '"two"' } });
    record.set('bridge:callValue:3', { tool: 'client', inputJson: '3', outcome: { ok: true, payload: '"three"' } });
    const replay = countingHost();
    const plan = buildReplayPlan(parked.journal ? [parked.journal] : [], record);
    const rebuilt = { ...request, runId: `${request.runId}-replay`, replay: plan };
    expect(valueOf(await pool.run(rebuilt, replay.host))).toBe('[1,"two","three",4]');
    expect(replay.made.map((call) => call.id)).toEqual(['bridge:callValue:4']);
  });
});
