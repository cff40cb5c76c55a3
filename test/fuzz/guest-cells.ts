import fc from 'fast-check';
import { fuzzJson, nastyString } from './rest-inputs';

/**
 * Random calls at the guest API (SPEC §4, §15): bridge arguments, the catalog, the store, results,
 * timers, core tools and the platform globals, each a JS expression of random arguments. A cell
 * runs a batch of them, each in its own try/catch, so one cell carries many inputs.
 */

/** A JS expression for an argument: JSON of the API's shapes, or values JSON cannot carry. */
const argument: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fuzzJson.map((v) => JSON.stringify(v) ?? 'undefined'), weight: 4 },
  nastyString(12).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    'undefined',
    'NaN',
    '-Infinity',
    '1e21',
    '-1',
    'Symbol("s")',
    '10n',
    '() => 1',
    '{ toJSON() { throw new Error("toJSON") } }',
    '{ get x() { throw new Error("getter") } }',
    'new Proxy({}, { get() { throw new Error("proxy") } })',
    '(() => { const o = {}; o.self = o; return o; })()',
    '"x".repeat(300000)',
    'new Array(5000).fill("y")',
    'new Uint8Array(4)',
    'new Date(NaN)',
    'Object.create(null)',
    '[,,1]',
  ),
);

/** A path at the `API` virtual file system, or a name at a catalog/nodes/skills lookup. */
const lookup = fc.oneof(
  fc.constantFrom(
    '',
    'results.d.ts',
    'tools/',
    'tools/ls.d.ts',
    'mcp/index.d.ts',
    'nodes.d.ts',
    'skills.d.ts',
    '../etc/passwd',
    'a/../../b',
    '\u0000',
  ),
  nastyString(16),
);

const op: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(argument, argument).map(([k, v]) => `store(${k}, ${v})`),
  fc.tuple(lookup, argument).map(([k, v]) => `store(${JSON.stringify(k)}, ${v})`),
  argument.map((k) => `load(${k})`),
  argument.map((v) => `results.save(${v})`),
  argument.map((v) => `results.save(${v}).then((d) => results.load(d.id)).then((v) => JSON.stringify(v).length)`),
  fc.tuple(fc.constantFrom('load', 'delete'), argument).map(([m, id]) => `results.${m}(${id})`),
  fc.tuple(argument, argument).map(([q, o]) => `catalog.search(${q}, ${o}).then((hs) => hs.map((h) => h.callableName))`),
  lookup.map((q) => `catalog.search(${JSON.stringify(q)}).then((hs) => hs.map((h) => JSON.stringify(h)))`),
  argument.map((a) => `Promise.all(catalog.all().slice(0, 3).map((h) => h.describe(${a})))`),
  fc.tuple(fc.constantFrom('list', 'read'), lookup).map(([m, p]) => `API.${m}(${JSON.stringify(p)})`),
  fc.tuple(fc.constantFrom('list', 'read'), argument).map(([m, p]) => `API.${m}(${p})`),
  fc
    .tuple(fc.oneof(argument, fc.constantFrom('0', '1', '5', '25')), fc.boolean())
    .map(
      ([delay, cancel]) =>
        `new Promise((resolve, reject) => { try { const t = setTimeout(resolve, ${delay}, 1); ${cancel ? 'clearTimeout(t); resolve(0);' : ''} setTimeout(resolve, 30, 2); } catch (e) { reject(e); } })`,
    ),
  argument.map((id) => `clearTimeout(${id})`),
  fc.tuple(fc.constantFrom('ls', 'read', 'find', 'grep'), argument).map(([tool, a]) => `${tool}(${a})`),
  argument.map((a) => `nodes.get(${a})`),
  argument.map((a) => `nodes.list(${a})`),
  argument.map((a) => `skills.list(${a})`),
  argument.map((a) => `skills.read(${a})`),
  fc.tuple(fc.constantFrom('text', 'json'), argument).map(([f, a]) => `${f}(${a})`),
  argument.map((a) => `console.log(${a})`),
  argument.map((a) => `new TextDecoder().decode(new TextEncoder().encode(${a}))`),
  argument.map((a) => `MCP.nope.call(${a})`),
);

/** A cell running `ops` random guest calls; it answers how many settled and how many threw. */
export const guestCell = (ops: number): fc.Arbitrary<{ code: string; ops: number }> =>
  fc.array(op, { minLength: ops, maxLength: ops }).map((calls) => ({
    ops: calls.length,
    code: [
      'let settled = 0, threw = 0;',
      ...calls.map((call) => `try { await (${call}); settled += 1; } catch (e) { threw += 1; }`),
      'return { settled, threw };',
    ].join('\n'),
  }));
