import { RESTART_SAFE_SURFACE_MESSAGE, type BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, valueOf, waiting } from './test-support';

/** The surfaces a session without `agents: true` has, and with it (as `SessionToolCatalog` lists them). */
const SKILLS = [
  { name: 'skills.list', replaySafe: true },
  { name: 'skills.read', replaySafe: true },
];
const WITH_AGENTS = [...SKILLS, { name: 'agents.run', replaySafe: false }];

/** Answers skills calls; `agents.run` only the platform answers. */
function surfaceHost(calls: BridgeCall[]): BridgeHost {
  return {
    async dispatch(call) {
      calls.push(call);
      const args = call.args as { tool?: string; input?: { name?: unknown } };
      if (args.tool === 'skills.list') return [{ name: 'deploy', description: 'd' }];
      if (args.tool === 'skills.read') throw new Error(`unknown skill: ${String(args.input?.name)}`);
      throw new Error(`unexpected ${call.method} ${String(args.tool)}`);
    },
    answeredByPlatform: (call) => call.method === 'callValue' && (call.args as { tool?: unknown }).tool === 'agents.run',
  };
}

describe('SandboxPool: platform surfaces (SPEC §15)', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  async function run(code: string, surfaces: typeof SKILLS | undefined, options: { restartSafe?: boolean } = {}) {
    const calls: BridgeCall[] = [];
    const request = {
      ...cell(code),
      catalogJson: testCatalog(['echo'], { surfaces }),
      restartSafe: options.restartSafe,
      seed: [1, 2, 3, 4],
    };
    return { outcome: await pool.run(request, surfaceHost(calls)), calls, runId: request.runId };
  }

  it('skills is always installed, frozen, and each of its calls is a callValue of the dotted surface name', async () => {
    const { outcome, calls } = await run(
      'const listed = await skills.list(); const missing = await skills.read(42).catch((e) => e.message);' +
        ' return [Object.isFrozen(skills), Object.getPrototypeOf(skills), listed, missing, typeof agents]',
      undefined,
    );
    expect(JSON.parse(valueOf(outcome))).toEqual([true, null, [{ name: 'deploy', description: 'd' }], 'unknown skill: 42', 'undefined']);
    expect(calls.map((call) => [call.method, call.args])).toEqual([
      ['callValue', { tool: 'skills.list', input: {} }],
      ['callValue', { tool: 'skills.read', input: { name: 42 } }],
    ]);
  });

  it('agents is a ReferenceError unless the catalog lists agents.run; agents.run(input) is a platform-answered callValue', async () => {
    const without = await run('return agents.run({})', SKILLS);
    expect(failure(without.outcome).error).toContain("ReferenceError: 'agents' is not defined");
    const task = await run('return await agents.run({ task: "t" })', WITH_AGENTS);
    const parked = waiting(task.outcome);
    expect(parked.pending).toEqual([{ id: 'bridge:callValue:1', method: 'callValue', args: { tool: 'agents.run', input: { task: 't' } } }]);
    pool.discard(task.runId);
    const bare = await run('return await agents.run()', WITH_AGENTS);
    const absent = waiting(bare.outcome);
    expect(absent.pending.map((call) => call.args)).toEqual([{ tool: 'agents.run', input: {} }]);
    pool.discard(bare.runId);
  });

  it('restartSafe: the replay-safe skills surfaces may be called; agents.run is refused and never dispatched', async () => {
    const safe = await run('return (await skills.list()).length', WITH_AGENTS, { restartSafe: true });
    expect(valueOf(safe.outcome)).toBe('1');
    const refused = await run('try { await agents.run({}) } catch {} return 1', WITH_AGENTS, { restartSafe: true });
    expect(failure(refused.outcome)).toEqual({ code: 'invalid_input', phase: 'input', error: RESTART_SAFE_SURFACE_MESSAGE });
    expect(refused.calls).toEqual([]);
  });
});
