import { SandboxPool } from './sandbox-pool';
import { cell, failure, valueOf } from './test-support';

const TIMEOUT = { code: 'timeout', phase: 'guest', error: 'code mode timeout exceeded' };

describe('SandboxPool: hostile cells', () => {
  let pool: SandboxPool;
  const logs: string[] = [];
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2, logger: (level, msg) => logs.push(`${level}: ${msg}`) });
  });
  afterAll(async () => {
    await pool.close();
  });

  /** Every hostile cell is followed by a normal one on the same pool. */
  async function stillServes(): Promise<void> {
    expect(valueOf(await pool.run(cell('return [1, 2].map((n) => n * 2)')))).toBe('[2,4]');
  }

  it('stops while(true){} at its deadline', async () => {
    const started = performance.now();
    expect(failure(await pool.run(cell('while (true) {}', { timeoutMs: 100 })))).toEqual(TIMEOUT);
    expect(performance.now() - started).toBeLessThan(1000);
    await stillServes();
  });

  it('terminates and replaces a thread stuck in a native builtin', async () => {
    const started = performance.now();
    const outcome = await pool.run(cell('return new Array(1e8).join(",").length', { timeoutMs: 500 }));
    expect(failure(outcome)).toEqual(TIMEOUT);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(logs).toContain('warn: sandbox thread overran its deadline; terminating it');
    await stillServes();
    await stillServes();
    for (let i = 0; i < 50 && pool.stats().idle < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(pool.stats()).toEqual({ threads: 2, busy: 0, idle: 2, starting: 0, parked: 0, parkedMemoryBytes: 0 });
  });

  it('fails a memory bomb under a 16 MiB cap without harming the worker', async () => {
    const bomb = 'const a = []; while (true) a.push("x".repeat(1000) + a.length);';
    const outcome = failure(await pool.run(cell(bomb, { memoryLimitBytes: 16 * 1024 * 1024 })));
    expect(outcome.code).toBe('internal_error');
    expect(outcome.phase).toBe('guest');
    expect(outcome.error.split('\n')[0]).toBe('InternalError: out of memory');
    const single = failure(await pool.run(cell('return "x".repeat(4 * 1024 * 1024).length', { memoryLimitBytes: 1024 * 1024 })));
    expect(single.error.split('\n')[0]).toBe('InternalError: out of memory');
    await stillServes();
  });

  it.each([
    ['unbounded recursion', 'function r() { return r() + 1 } return r()', 'RangeError: Maximum call stack size exceeded'],
    ['deep JSON.parse', 'return JSON.parse("[".repeat(1e6))', 'SyntaxError: stack overflow'],
    [
      'self-referential toString',
      'const o = {}; o.toString = () => String(o); return String(o)',
      'RangeError: Maximum call stack size exceeded',
    ],
    ['deeply nested source', 'return eval("(".repeat(1e5) + "1" + ")".repeat(1e5))', 'SyntaxError: stack overflow'],
  ])('fails %s as a stack overflow', async (_name, code, header) => {
    const outcome = failure(await pool.run(cell(code)));
    expect(outcome.code).toBe('internal_error');
    expect(outcome.error.split('\n')[0]).toBe(header);
    await stillServes();
  });

  it.each([
    [
      'an async function that catches its interrupt and re-queues',
      'async function f() { try { while (true) {} } catch (e) {} await null; f(); } f(); await new Promise(() => {});',
    ],
    ['a Promise.resolve().then loop', 'function g() { Promise.resolve().then(g); } g(); return 1;'],
  ])('times out %s', async (_name, code) => {
    const started = performance.now();
    expect(failure(await pool.run(cell(code, { timeoutMs: 200 })))).toEqual(TIMEOUT);
    expect(performance.now() - started).toBeLessThan(1500);
    await stillServes();
  });

  it('parks a timer loop at its deadline (idle VM, host work pending) and discards it', async () => {
    const started = performance.now();
    const outcome = await pool.run(cell('function t() { setTimeout(t, 0); } t(); return 1;', { timeoutMs: 200 }));
    expect(performance.now() - started).toBeLessThan(1500);
    expect(outcome.status).toBe('waiting');
    expect(pool.discard(cell.lastRunId())).toBe(true);
    expect(pool.parkedCount()).toBe(0);
    await stillServes();
  });
});
