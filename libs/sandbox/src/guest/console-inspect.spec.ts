import * as vm from 'node:vm';
import { CONSOLE_INSPECT_LIMITS, CONSOLE_INSPECT_SOURCE } from './console-inspect';

type Format = (method: string, args: unknown[]) => string;

/** Fresh realm per test: capture the formatter, then evaluate the guest's arguments there. */
function realm(setup = ''): { format: Format; run: (code: string) => string; context: vm.Context } {
  const context = vm.createContext({});
  const format = vm.runInContext(CONSOLE_INSPECT_SOURCE, context) as Format;
  context.__format = format;
  // Node's contextified global aborts on global writes once Object.prototype is poisoned, so the
  // setup that may poison it runs after the last global write.
  if (setup) vm.runInContext(setup, context);
  const run = (code: string): string => vm.runInContext(`__format(${code})`, context) as string;
  return { format, run, context };
}

describe('CONSOLE_INSPECT_SOURCE', () => {
  it.each([
    ['log', `"log", ["a %s", "b", 1, -0, 2n, true, null, undefined]`, 'a %s b 1 -0 2n true null undefined'],
    ['info', `"info", ["x"]`, '[info] x'],
    ['warn', `"warn", ["x"]`, '[warn] x'],
    ['error', `"error", ["x"]`, '[error] x'],
    ['debug', `"debug", ["x"]`, '[debug] x'],
    ['nested JSON-like', `"log", [{a: 1, b: [1, "x", {c: null}], s: "q\\""}]`, '{"a":1,"b":[1,"x",{"c":null}],"s":"q\\""}'],
    [
      'symbols, holes and undefined',
      `"log", [Symbol("s"), [1, , 3, undefined], {[Symbol("k")]: 1, u: undefined, s: Symbol("t"), b: 2n}]`,
      'Symbol(s) [1,null,3,"undefined"] {"u":"undefined","s":"Symbol(t)","b":"2n"}',
    ],
    ['numbers as JSON inside objects', `"log", [NaN, -0, [NaN, -0, Infinity, 1e21]]`, 'NaN -0 [null,0,null,1e+21]'],
    ['functions', `"log", [function foo() {}, () => 1, {f() {}}]`, '[Function] [Function] {"f":"[Function]"}'],
    ['errors', `"log", [new TypeError("bad"), {e: new RangeError("in")}]`, 'TypeError: bad {"e":"RangeError: in"}'],
    ['dates and regexps', `"log", [new Date(0), {d: new Date(NaN)}, /a+b/gi]`, '"1970-01-01T00:00:00.000Z" {"d":null} {}'],
    ['maps and sets as JSON does', `"log", [new Map([["k", {v: 1}]]), new Set([1, "2"])]`, '{} {}'],
    [
      'promises',
      `"log", [Promise.resolve(1), (async () => {})(), {p: new Promise(() => {})}]`,
      '[Unawaited Promise: use await or Promise.all(...) before emitting or returning values.] [Unawaited Promise: use await or Promise.all(...) before emitting or returning values.] {"p":"[Unawaited Promise: use await or Promise.all(...) before emitting or returning values.]"}',
    ],
    [
      'classes and null prototypes',
      `"log", [new (class Foo { constructor() { this.a = 1; } })(), Object.assign(Object.create(null), {b: 2})]`,
      '{"a":1} {"b":2}',
    ],
    ['binary', `"log", [new Uint8Array([1, 2]), new ArrayBuffer(4), new WeakMap()]`, '{"0":1,"1":2} {} {}'],
  ])('formats %s', (_name, call, expected) => {
    expect(realm().run(call)).toBe(expected);
  });

  it('never runs getters, setters, toJSON or toString overrides', () => {
    const { run, context } = realm('globalThis.calls = 0;');
    const out = run(`"log", [{
      get g() { calls++; return 1; },
      set s(v) { calls++; },
      get gs() { calls++; return 1; }, set gs(v) { calls++; },
      toJSON() { calls++; return "json"; },
      toString() { calls++; return "str"; },
      nested: { get deep() { calls++; return 2; } },
    }]`);
    expect(out).toBe(
      '{"g":"[Accessor]","s":"[Accessor]","gs":"[Accessor]","toJSON":"[Function]","toString":"[Function]","nested":{"deep":"[Accessor]"}}',
    );
    expect(vm.runInContext('calls', context)).toBe(0);
  });

  it('ignores a Symbol.toStringTag getter and error name getters', () => {
    const { run, context } = realm('globalThis.calls = 0;');
    const out = run(`"log", [
      { get [Symbol.toStringTag]() { calls++; return "X"; } },
      Object.defineProperty(new Error("m"), "name", { get() { calls++; return "Evil"; } }),
    ]`);
    expect(out).toBe('{} Error: m');
    expect(vm.runInContext('calls', context)).toBe(0);
  });

  it('marks cycles without losing sibling repeats', () => {
    const out = realm().run(
      `"log", [(() => { const shared = {v: 1}; const o = {a: shared, b: shared}; o.self = o; o.list = [o]; return o; })()]`,
    );
    expect(out).toBe('{"a":{"v":1},"b":{"v":1},"self":"[Circular]","list":["[Circular]"]}');
    expect(realm().run(`"log", [(() => { const o = {}; o.self = o; return o; })()]`)).toBe('{"self":"[Circular]"}');
  });

  it('caps depth at 4 levels', () => {
    expect(realm().run(`"log", [{a: {b: {c: {d: {e: 1}}}}}, [[[[[1]]]]], {a: {b: {c: {d: 1}}}}]`)).toBe(
      '{"a":{"b":{"c":{"d":"[truncated]"}}}} [[[["[truncated]"]]]] {"a":{"b":{"c":{"d":1}}}}',
    );
  });

  it('caps properties at 50 and array items at 50', () => {
    const { run } = realm();
    const objectOut = run(`"log", [Object.fromEntries(Array.from({length: 60}, (_, i) => ["k" + i, i]))]`);
    expect(objectOut.match(/"k\d+":/g)).toHaveLength(CONSOLE_INSPECT_LIMITS.maxProperties);
    expect(objectOut.endsWith(',... 10 more properties}')).toBe(true);
    const arrayOut = run(`"log", [Array.from({length: 70}, (_, i) => i)]`);
    expect(arrayOut).toBe('[' + Array.from({ length: 50 }, (_, i) => i).join(',') + ',... 20 more items]');
  });

  it('caps strings at 512 units without splitting a surrogate pair', () => {
    const { run } = realm();
    const top = run(`"log", ["x".repeat(600)]`);
    expect(top).toBe('x'.repeat(511) + '…');
    expect(run(`"log", ["a" + "🦞".repeat(300)]`)).toBe('a' + '🦞'.repeat(255) + '…');
    const emoji = run(`"log", ["🦞".repeat(300)]`);
    expect(emoji).toHaveLength(511);
    expect(emoji).toBe('🦞'.repeat(255) + '…');
    const nested = run(`"log", [["y".repeat(600)]]`);
    expect(nested).toBe(`["${'y'.repeat(511)}…"]`);
  });

  it('caps the message at 4096 units and 100 values', () => {
    const { run } = realm();
    const long = run(`"warn", Array.from({length: 20}, () => "z".repeat(500))`);
    expect(long).toHaveLength(CONSOLE_INSPECT_LIMITS.maxMessageUnits);
    expect(long.startsWith('[warn] zzz')).toBe(true);
    expect(long.endsWith('…')).toBe(true);
    const many = run(`"log", Array.from({length: 200}, (_, i) => i % 10)`);
    expect(many).toBe(Array.from({ length: 100 }, (_, i) => i % 10).join(' ') + ' ... 100 more arguments');
  });

  it('stays bounded on very wide and deep arguments', () => {
    const { run } = realm();
    const started = Date.now();
    const out = run(`"log", [(() => {
      const make = (d) => d === 0 ? 1 : Object.fromEntries(Array.from({length: 20}, (_, i) => ["k" + i, make(d - 1)]));
      return make(4);
    })()]`);
    expect(out.length).toBeLessThanOrEqual(4096);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('turns a throwing Proxy into [Unserializable] without throwing into the guest', () => {
    const { run } = realm();
    expect(run(`"error", ["before", new Proxy({}, { ownKeys() { throw Error("bad proxy"); } }), "after"]`)).toBe(
      '[error] before [Unserializable] after',
    );
    expect(run(`"log", [{ok: 1, bad: new Proxy({}, { getPrototypeOf() { throw 1; } })}]`)).toBe('{"ok":1,"bad":"[Unserializable]"}');
    expect(run(`"log", [(() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; })()]`)).toBe('[Unserializable]');
  });

  it('keeps using captured intrinsics after the guest replaces them', () => {
    const { run } = realm(`
      Object.keys = () => { throw new Error("keys"); };
      Reflect.ownKeys = () => { throw new Error("ownKeys"); };
      Object.getOwnPropertyDescriptor = () => { throw new Error("gopd"); };
      JSON.stringify = () => "forged";
      Array.isArray = () => false;
      Function.prototype.call = () => "forged";
      Object.getPrototypeOf(new Map().entries()).next = () => ({ done: true });
      Map.prototype.entries = () => { throw new Error("entries"); };
      String.prototype.slice = () => "forged";
      globalThis.String = () => "forged";
      Object.defineProperty(Object.prototype, "text", { set(v) { throw new Error("proto set"); } });
      Object.defineProperty(Object.prototype, "get", { get() { throw new Error("proto get"); } });
    `);
    expect(run(`"info", [{a: [1, "s"], m: new Map([[1, 2]])}, 5]`)).toBe('[info] {"a":[1,"s"],"m":{}} 5');
  });
});
