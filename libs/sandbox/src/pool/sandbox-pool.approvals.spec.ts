import type { BridgeHost, CallGate } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, testCatalog, tick, valueOf, waiting } from './test-support';

/**
 * A host whose `gated` calls step aside until `decide` is called, as an approval does (SPEC §11);
 * `echo` answers after 50 ms.
 */
function approvingHost() {
  const decisions = new Map<string, (approve: boolean) => void>();
  const host: BridgeHost = {
    async dispatch(call, _signal, gate?: CallGate) {
      const { tool, input } = call.args as { tool: string; input: unknown };
      if (tool === 'gated' && gate) {
        gate.hold();
        const approved = await new Promise<boolean>((resolve) => decisions.set(call.id, resolve));
        if (!approved) throw new Error(`code mode tool gated was denied: no reason given`);
        await gate.resume();
      }
      await tick(50);
      return input;
    },
  };
  const decide = async (id: string, approve: boolean) => {
    for (let i = 0; i < 100 && !decisions.has(id); i += 1) await tick(10);
    decisions.get(id)?.(approve);
  };
  return { host, decide };
}

const TOOLS = testCatalog(['gated', 'echo']);

describe('SandboxPool: calls held for a decision (SPEC §11)', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('stops the budget clock while only held calls are unsettled, and goes on with what was left', async () => {
    const { host, decide } = approvingHost();
    const run = pool.run(
      { ...cell('const a = await gated(1); const b = await echo(2); return a + b', { timeoutMs: 300 }), catalogJson: TOOLS },
      host,
    );
    await tick(800);
    await decide('bridge:callValue:1', true);
    expect(valueOf(await run)).toBe('3');
  });

  it('keeps siblings running and gives the held call no slot', async () => {
    const { host, decide } = approvingHost();
    const code = 'const held = gated(1); const other = await echo(2); return (await held) + other';
    const run = pool.run({ ...cell(code, { timeoutMs: 300, maxPendingToolCalls: 1 }), catalogJson: TOOLS }, host);
    await tick(600);
    await decide('bridge:callValue:1', true);
    expect(valueOf(await run)).toBe('3');
  });

  it('still times out guest code that spins while a call is held, and a denial rejects', async () => {
    const { host, decide } = approvingHost();
    const spin = pool.run({ ...cell('gated(1).catch(() => 0); for (;;) {}', { timeoutMs: 200 }), catalogJson: TOOLS }, host);
    expect(await spin).toMatchObject({ status: 'failed', code: 'timeout' });
    const denied = pool.run(
      { ...cell('try { await gated(1); } catch (e) { return e.message; }', { timeoutMs: 200 }), catalogJson: TOOLS },
      host,
    );
    await tick(400);
    await decide('bridge:callValue:1', false);
    expect(valueOf(await denied)).toBe(JSON.stringify('code mode tool gated was denied: no reason given'));
  });

  it('parks at once when the guest yields while a call is held; the decision may come while parked', async () => {
    const { host, decide } = approvingHost();
    const code = 'const held = gated(5); await yield_control("later"); return await held';
    const first = waiting(await pool.run({ ...cell(code, { timeoutMs: 5000 }), catalogJson: TOOLS }, host));
    expect(first.pending.map((c) => c.id)).toEqual(['bridge:callValue:1', 'bridge:yield:1']);
    await decide('bridge:callValue:1', true);
    await tick(100);
    expect(valueOf(await pool.resume(cell.lastRunId(), { timeoutMs: 300 }, host))).toBe('5');
  });
});
