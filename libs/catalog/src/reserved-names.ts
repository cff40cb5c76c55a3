/**
 * Names a tool global must not take (SPEC §5). A cell is the body of an async function in
 * sloppy mode, so a tool bound under one of these would either be a syntax error, be shadowed
 * by a guest global or a function-local binding, or replace a global the guest relies on.
 */

/** ECMAScript reserved words, strict-mode reserved words and contextual keywords that cannot
 * safely name a global inside an async function body. */
export const RESERVED_WORDS: ReadonlySet<string> = new Set(
  (
    'break case catch class const continue debugger default delete do else export extends false ' +
    'finally for function if import in instanceof new null return super switch this throw true try ' +
    'typeof var void while with await enum implements interface package private protected public ' +
    'static yield let arguments'
  ).split(' '),
);

/** Globals the Code Mode guest installs (SPEC §4) plus host names that must stay undefined. */
export const GUEST_GLOBAL_NAMES: readonly string[] = [
  'catalog',
  'API',
  'MCP',
  'namespaces',
  'results',
  'store',
  'load',
  'text',
  'json',
  'console',
  'process',
  'module',
  'require',
  'yield_control',
  'setTimeout',
  'clearTimeout',
  'TextEncoder',
  'TextDecoder',
  // SPEC §15's platform surfaces: reserved before they are installed, `agents` whether or not a
  // session enables it, so a tool never takes the name a cell will know them by.
  'nodes',
  'skills',
  'agents',
];

/** Standard JavaScript globals (the list OpenClaw reserves). */
export const STANDARD_GLOBAL_NAMES: readonly string[] = (
  'globalThis AggregateError Array ArrayBuffer Atomics BigInt BigInt64Array BigUint64Array Boolean ' +
  'DataView Date Error EvalError FinalizationRegistry Float32Array Float64Array Function Infinity ' +
  'Int16Array Int32Array Int8Array Intl JSON Map Math NaN Number Object Promise Proxy RangeError ' +
  'ReferenceError Reflect RegExp Set SharedArrayBuffer String Symbol SyntaxError TypeError URIError ' +
  'URL URLSearchParams Uint16Array Uint32Array Uint8Array Uint8ClampedArray WeakMap WeakRef WeakSet ' +
  'WebAssembly decodeURI decodeURIComponent encodeURI encodeURIComponent escape eval isFinite isNaN ' +
  'parseFloat parseInt undefined unescape'
).split(' ');

/** Every global name a tool callable may not take as-is. */
export const RESERVED_GLOBAL_NAMES: ReadonlySet<string> = new Set([...GUEST_GLOBAL_NAMES, ...STANDARD_GLOBAL_NAMES]);

/** Path segments that would reach prototypes if used as namespace keys. */
export const FORBIDDEN_PATH_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
