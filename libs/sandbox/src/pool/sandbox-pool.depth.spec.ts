import type { BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, toolMetadata, valueOf } from './test-support';

const TOO_DEEP = 'value nests deeper than 128 levels.';
const CATALOG = testCatalog(['echo'], {
  mcp: [
    {
      serverIdentifier: 'srv',
      serverName: 'srv',
      tools: [{ toolIdentifier: 't', metadata: toolMetadata('MCP.srv.t', { toolName: 't', source: 'mcp' }) }],
    },
  ],
});

/** Guest source of a value nested `levels` deep (arrays inside arrays, or objects). */
const deep = (levels: number, kind: 'array' | 'object' = 'array'): string =>
  kind === 'array'
    ? `(() => { let v = []; for (let i = 1; i < ${levels}; i++) v = [v]; return v; })()`
    : `(() => { let v = {}; for (let i = 1; i < ${levels}; i++) v = { v }; return v; })()`;

function echoHost(calls: BridgeCall[]): BridgeHost {
  return {
    dispatch(call) {
      calls.push(call);
      return Promise.resolve(call.method === 'store' ? null : 'ok');
    },
  };
}

/** SPEC §10 "Depth": values a cell returns or passes to tools nest at most 128 levels. */
describe('SandboxPool: value depth', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  async function run(code: string) {
    const calls: BridgeCall[] = [];
    const outcome = await pool.run({ ...cell(code), catalogJson: CATALOG }, echoHost(calls));
    return { outcome, calls };
  }

  it('returns a value of exactly 128 levels and fails one of 129 or 200 with the SPEC text', async () => {
    expect(valueOf((await run(`return ${deep(128)}`)).outcome)).toBe('['.repeat(128) + ']'.repeat(128));
    const returns = [`return ${deep(129)}`, `return ${deep(200, 'object')}`, `return { wrapped: ${deep(128)} }`, `return ${deep(50_000)}`];
    for (const code of returns) {
      expect(failure((await run(code)).outcome)).toEqual({ code: 'invalid_input', phase: 'guest', error: TOO_DEEP });
    }
  });

  it('rejects a tool call, an MCP call and a store write of a value past 128 levels, catchably, and sends nothing', async () => {
    const code = `
      const out = [];
      const calls = [() => echo(${deep(129)}), () => MCP.srv.t(${deep(200)}), () => store('k', ${deep(129, 'object')}), () => echo(${deep(50_000)})];
      for (const call of calls) {
        try { await call(); out.push('sent'); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      out.push(await echo(${deep(128)}), await MCP.srv.t(${deep(128)}));
      return out;`;
    const { outcome, calls } = await run(code);
    expect(JSON.parse(valueOf(outcome))).toEqual([...Array<string>(4).fill(`TypeError: ${TOO_DEEP}`), 'ok', 'ok']);
    expect(calls.map((c) => c.method)).toEqual(['callValue', 'namespace']);
  });

  it('fails a cell that leaves a too-deep tool call unhandled with the SPEC text', async () => {
    const failed = failure((await run(`await echo(${deep(200)}); return 1`)).outcome);
    expect(failed.error).toContain(`TypeError: ${TOO_DEEP}`);
  });
});
