import { bridgeQueueLimitMessage } from '@codemode/cells';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, valueOf } from './test-support';

describe('SandboxPool: cell semantics', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('returns the compact JSON of the value; no return gives null', async () => {
    expect(valueOf(await pool.run(cell('return 1+1')))).toBe('2');
    expect(valueOf(await pool.run(cell('1 + 1;')))).toBe('null');
    expect(valueOf(await pool.run(cell('return { a: [1, "x", null], b: undefined }')))).toBe('{"a":[1,"x",null]}');
  });

  it('runs sloppy, with this === globalThis, and nothing carries between cells', async () => {
    expect(valueOf(await pool.run(cell('return this === globalThis')))).toBe('true');
    expect(valueOf(await pool.run(cell('x = 5; return x')))).toBe('5');
    expect(valueOf(await pool.run(cell('return typeof x')))).toBe('"undefined"');
  });

  it('has no process, module or require; using them is module access', async () => {
    const types = 'return [typeof process, typeof module, typeof require]';
    expect(valueOf(await pool.run(cell(types)))).toBe('["undefined","undefined","undefined"]');
    for (const code of ['process.env', 'return module.exports', 'await null; require("fs")']) {
      expect(failure(await pool.run(cell(code)))).toEqual({
        code: 'invalid_input',
        phase: 'guest',
        error: 'code mode module access is disabled.',
      });
    }
  });

  it('reports a thrown Error as Name: message with cell.js frames', async () => {
    const outcome = failure(await pool.run(cell('function f() {\n  throw new Error("boom");\n}\nf();')));
    expect(outcome.code).toBe('internal_error');
    expect(outcome.phase).toBe('guest');
    expect(outcome.error).toBe('Error: boom\n    at f (cell.js:2:18)\n    at <anonymous> (cell.js:4:2)');
    expect(failure(await pool.run(cell('throw "plain"'))).error).toBe('plain');
    expect(failure(await pool.run(cell('throw new TypeError("t")'))).error).toMatch(
      /^TypeError: t\n {4}at <anonymous> \(cell\.js:1:\d+\)$/,
    );
  });

  it('keeps text, json and console entries in one ordered list', async () => {
    const code =
      'text("a"); json({ b: 1 }); console.log("c", 1); console.warn("w"); console.info("i");' +
      ' console.error("e"); console.debug("d"); text({ e: [1] }); json(undefined); text(new Error("x"));';
    const outcome = await pool.run(cell(code));
    expect(outcome.output).toEqual([
      { type: 'text', text: 'a' },
      { type: 'json', value: { b: 1 } },
      { type: 'text', text: 'c 1' },
      { type: 'text', text: '[warn] w' },
      { type: 'text', text: '[info] i' },
      { type: 'text', text: '[error] e' },
      { type: 'text', text: '[debug] d' },
      { type: 'text', text: '{"e":[1]}' },
      { type: 'json', value: null },
      { type: 'text', text: '{"name":"Error","message":"x"}' },
    ]);
    expect(outcome.bridgeDispatchStarted).toBe(false);
  });

  it('orders timers with awaited promises and runs detached timers before completing', async () => {
    const ordered = await pool.run(
      cell(
        'const o = []; setTimeout(() => o.push("t2"), 20); setTimeout((a, b) => o.push(a + b), 5, "t", 1);' +
          ' await Promise.resolve(); o.push("micro"); await new Promise((r) => setTimeout(r, 40)); o.push("after"); return o;',
      ),
    );
    expect(valueOf(ordered)).toBe('["micro","t1","t2","after"]');
    expect(ordered.bridgeDispatchStarted).toBe(true);
    const detached = await pool.run(cell('setTimeout(() => text("late"), 30); text("early"); return 1'));
    expect(valueOf(detached)).toBe('1');
    expect(detached.output).toEqual([
      { type: 'text', text: 'early' },
      { type: 'text', text: 'late' },
    ]);
  });

  it('clearTimeout prevents the callback; bad delays throw the SPEC message', async () => {
    const cleared =
      'const o = []; const id = setTimeout(() => o.push("no"), 5); clearTimeout(id);' +
      ' await new Promise((r) => setTimeout(r, 30)); return o';
    expect(valueOf(await pool.run(cell(cleared)))).toBe('[]');
    for (const delay of ['-1', 'NaN', 'Infinity', '"10"']) {
      const outcome = failure(await pool.run(cell(`setTimeout(() => {}, ${delay})`)));
      expect(outcome.error.split('\n')[0]).toBe('TypeError: setTimeout delay must be a non-negative finite number.');
    }
    expect(valueOf(await pool.run(cell('await new Promise((r) => setTimeout(r)); return "zero"')))).toBe('"zero"');
  });

  it('fails a timer callback that throws, and a promise pending without host work', async () => {
    expect(failure(await pool.run(cell('setTimeout(() => { throw new RangeError("late") }, 1)'))).error).toMatch(/^RangeError: late\n/);
    expect(failure(await pool.run(cell('await new Promise(() => {})')))).toEqual({
      code: 'internal_error',
      phase: 'guest',
      error: 'code mode promise is pending without host work',
    });
  });

  it('queues timers beyond maxPendingToolCalls and fails only past 128 queued', async () => {
    const queued =
      'const fired = []; for (let i = 0; i < 10; i++) setTimeout(() => fired.push(i), 5); await new Promise((r) => setTimeout(r, 20)); return fired';
    expect(valueOf(await pool.run(cell(queued, { maxPendingToolCalls: 2 })))).toBe('[0,1,2,3,4,5,6,7,8,9]');
    const outcome = failure(await pool.run(cell('for (let i = 0; i < 131; i++) setTimeout(() => {}, 5)', { maxPendingToolCalls: 2 })));
    expect(outcome).toEqual({ code: 'invalid_input', phase: 'guest', error: bridgeQueueLimitMessage(2) });
  });

  it('fails a value that is not JSON-serializable', async () => {
    expect(failure(await pool.run(cell('const o = {}; o.o = o; return o'))).error).toBe(
      'TypeError: code mode result is not JSON-serializable: circular reference',
    );
    expect(failure(await pool.run(cell('return { n: 1n }'))).error).toBe(
      'TypeError: code mode result is not JSON-serializable: Do not know how to serialize a BigInt',
    );
  });

  it('cannot be forged by replacing then, toJSON or JSON.stringify', async () => {
    const code =
      'Promise.prototype.then = function () { return "forged" };' +
      ' Object.prototype.toJSON = function () { return "forged" }; JSON.stringify = () => "\\"forged\\"";' +
      ' JSON.parse = () => "forged"; text(1); await null; return 5';
    const outcome = await pool.run(cell(code));
    expect(valueOf(outcome)).toBe('5');
    expect(outcome.output).toEqual([{ type: 'text', text: '1' }]);
  });

  it('treats a guest Error("interrupted") as internal_error, not timeout', async () => {
    expect(failure(await pool.run(cell('throw new Error("interrupted")'))).code).toBe('internal_error');
  });

  it('reports stats', () => {
    expect(pool.stats()).toEqual({ threads: 2, busy: 0, idle: 2, starting: 0, parked: 0, parkedMemoryBytes: 0 });
  });
});
