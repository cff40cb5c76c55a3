import { STACK_OVERFLOW_TEXT, type BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { UNAWAITED_PROMISE_TEXT } from '../guest/console-inspect';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, valueOf, waiting } from './test-support';

const STORE_KEY_MESSAGE = 'Code Mode store key must be a non-empty string of at most 256 characters.';

/** A host with a session store that checks keys as the worker's does (SPEC §4). */
function storeHost(calls: BridgeCall[] = []): BridgeHost {
  const values = new Map<string, unknown>();
  const checkKey = (key: unknown): string => {
    if (typeof key !== 'string' || key.length === 0 || key.length > 256) throw new TypeError(STORE_KEY_MESSAGE);
    return key;
  };
  return {
    async dispatch(call) {
      calls.push(call);
      const args = call.args as { key?: unknown; value?: unknown; delete?: boolean; tool?: string; input?: unknown };
      if (call.method === 'store') {
        const key = checkKey(args.key);
        if (args.delete) values.delete(key);
        else values.set(key, args.value);
        return null;
      }
      if (call.method === 'load') {
        const key = checkKey(args.key);
        return values.has(key) ? { found: true, value: values.get(key) } : { found: false };
      }
      return args.input ?? null;
    },
  };
}

describe('SandboxPool: OpenClaw fidelity of the guest API', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('renders console arguments in the JSON-with-placeholders form', async () => {
    const code = `
      const o = { a: 1 }; o.self = o;
      console.log(o);
      console.log({ get g() { return 1; }, f() {}, toJSON() { return "no"; }, deep: { a: { b: { c: { d: 1 } } } } });
      console.warn("x", () => 1, new TypeError("bad"), [1, "s", null]);
      console.log("%s", 1);
      return 1`;
    const outcome = await pool.run(cell(code));
    expect(valueOf(outcome)).toBe('1');
    expect(outcome.output).toEqual([
      { type: 'text', text: '{"a":1,"self":"[Circular]"}' },
      { type: 'text', text: '{"g":"[Accessor]","f":"[Function]","toJSON":"[Function]","deep":{"a":{"b":{"c":"[truncated]"}}}}' },
      { type: 'text', text: '[warn] x [Function] TypeError: bad [1,"s",null]' },
      { type: 'text', text: '%s 1' },
    ]);
  });

  it('tells the model to await a logged promise', async () => {
    const outcome = await pool.run(
      cell('console.log(Promise.resolve(1)); console.log({ p: new Promise(() => {}) }); text(Promise.resolve(2)); return 1'),
    );
    expect(outcome.output).toEqual([
      { type: 'text', text: UNAWAITED_PROMISE_TEXT },
      { type: 'text', text: `{"p":"${UNAWAITED_PROMISE_TEXT}"}` },
      { type: 'text', text: JSON.stringify(UNAWAITED_PROMISE_TEXT) },
    ]);
    expect(UNAWAITED_PROMISE_TEXT).toBe('[Unawaited Promise: use await or Promise.all(...) before emitting or returning values.]');
  });

  it('serializes a tool handle and an array of handles with JSON.stringify inside the cell', async () => {
    const code = 'return [JSON.stringify(echo), JSON.stringify([echo, other]), JSON.stringify({ t: echo }), typeof echo.toJSON]';
    const value = JSON.parse(valueOf(await pool.run({ ...cell(code), catalogJson: testCatalog(['echo', 'other']) }))) as string[];
    const meta = (name: string) => ({ callableName: name, toolName: name, description: `the ${name} tool`, source: 'client' });
    expect(JSON.parse(value[0])).toEqual(meta('echo'));
    expect(JSON.parse(value[1])).toEqual([meta('echo'), meta('other')]);
    expect(JSON.parse(value[2])).toEqual({ t: meta('echo') });
    expect(value[3]).toBe('function');
  });

  it('never converts a non-string store/load key: the host refuses it with the SPEC TypeError', async () => {
    const calls: BridgeCall[] = [];
    const code = `
      const out = [];
      for (const key of [{ toJSON() { return "k"; } }, 5, Symbol("s"), "", "x".repeat(257)]) {
        try { await store(key, 1); out.push("stored"); } catch (e) { out.push(e.name + ": " + e.message); }
        try { await load(key); out.push("loaded"); } catch (e) { out.push(e.name); }
      }
      await store("k", { v: 1 });
      return [out, await load("k")]`;
    const [refusals, loaded] = JSON.parse(valueOf(await pool.run(cell(code), storeHost(calls)))) as [string[], unknown];
    for (let i = 0; i < refusals.length; i += 2) {
      expect(refusals[i]).toBe(`TypeError: ${STORE_KEY_MESSAGE}`);
      expect(refusals[i + 1]).toBe('TypeError');
    }
    expect(loaded).toEqual({ v: 1 });
    expect((calls[0].args as { key: unknown }).key).toBeNull();
  });

  it('fails an uncaught store error in phase bridge, with bridgeDispatchStarted', async () => {
    const outcome = await pool.run(cell('await store({ toJSON() { return "k"; } }, 1); return 1'), storeHost());
    expect(failure(outcome)).toMatchObject({ code: 'internal_error', phase: 'bridge' });
    expect(failure(outcome).error.split('\n')[0]).toBe(`TypeError: ${STORE_KEY_MESSAGE}`);
    expect(outcome.bridgeDispatchStarted).toBe(true);
    const rethrown = await pool.run(cell('try { await load(7); } catch (e) { throw e; }'), storeHost());
    expect(failure(rethrown).phase).toBe('bridge');
    const other = await pool.run(cell('throw new TypeError("mine")'), storeHost());
    expect(failure(other).phase).toBe('guest');
  });

  it('reports unbounded recursion as RangeError: Maximum call stack size exceeded, after exec and after a resume', async () => {
    const first = failure(await pool.run(cell('function r() { return r() + 1 } return r()')));
    expect(first.code).toBe('internal_error');
    expect(first.phase).toBe('guest');
    expect(first.error.split('\n')[0]).toBe('RangeError: Maximum call stack size exceeded');
    const request = cell('await yield_control(); function r() { return r() + 1 } return r()');
    waiting(await pool.run(request));
    const resumed = failure(await pool.resume(request.runId, { timeoutMs: 2000 }));
    expect(resumed).toMatchObject({ code: 'internal_error', phase: 'guest' });
    expect(resumed.error.split('\n')[0]).toBe(STACK_OVERFLOW_TEXT);
  });
});
