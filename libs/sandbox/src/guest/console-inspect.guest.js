/**
 * Guest-side console formatting (SPEC §3 Output, §4 `console`), in OpenClaw's
 * JSON-with-placeholders form.
 *
 * This file is an ES2020 *expression*. Evaluated inside QuickJS before user code,
 * it captures every intrinsic it needs and yields `format(method, args) => string`.
 *
 * Invariants the source keeps, because the guest owns the realm after the prelude:
 * - only intrinsics captured at evaluation time are used at call time (methods are uncurried with
 *   a captured `Function.prototype.call.bind`, so replacing `call`, `Object.keys`, prototypes or
 *   globals later changes nothing);
 * - no getter, `toJSON`, `toString`/`valueOf` override or `Symbol.toStringTag` getter ever runs:
 *   properties are read through `Object.getOwnPropertyDescriptor` and only data values are used,
 *   types are recognised through internal-slot brand checks or captured prototypes;
 * - Proxy traps can still run (a Proxy is indistinguishable from its target in pure JS), but every
 *   value is inspected inside try/catch: a throwing trap or hostile value becomes
 *   `[Unserializable]` and nothing escapes into the guest's console call;
 * - output is written into one bounded accumulator, so work stops once the 4096-unit message cap
 *   is reached no matter how wide or deep the arguments are.
 *
 * Shape: arguments are joined by spaces; a top-level string prints raw, a number, boolean, null,
 * undefined, BigInt (`2n`) or symbol as its text, a function as `[Function]`, a promise as the
 * `[Unawaited Promise: …]` hint, an Error as `Name: message`. An object or array prints as
 * compact JSON (own enumerable string keys, as `JSON.stringify` would, but `toJSON` never runs;
 * a Date is its ISO string) in which what JSON cannot show is a string placeholder: a cycle
 * `"[Circular]"`, an accessor `"[Accessor]"`, a function `"[Function]"`, a promise the hint, an
 * Error `"Name: message"`, nesting past 4 levels `"[truncated]"`, `undefined`, BigInt and symbols
 * their text, a value that failed `"[Unserializable]"`. The size caps keep their markers
 * (`…` on a clipped string, `,... N more items`, `,... N more properties`,
 * ` ... N more arguments`). Non-log methods are prefixed `[info] `, `[warn] `, `[error] `,
 * `[debug] `; `%s` is left literal.
 */
(function () {
  'use strict';
  var FunctionCall = Function.prototype.call;
  var bindCall = FunctionCall.bind.bind(FunctionCall);
  var O = Object;
  var getOwnDescriptor = O.getOwnPropertyDescriptor;
  var getPrototypeOf = O.getPrototypeOf;
  var ownKeys = Reflect.ownKeys;
  var objectIs = O.is;
  var isArray = Array.isArray;
  var isFiniteNumber = Number.isFinite;
  var toStr = String;
  var jsonStringify = JSON.stringify;
  var hasOwn = bindCall(O.prototype.hasOwnProperty);
  var stringSlice = bindCall(String.prototype.slice);
  var charCodeAt = bindCall(String.prototype.charCodeAt);
  function getter(proto, name) {
    return bindCall(getOwnDescriptor(proto, name).get);
  }
  var dateGetTime = bindCall(Date.prototype.getTime);
  var dateToISOString = bindCall(Date.prototype.toISOString);
  var typedArrayProto = getPrototypeOf(Uint8Array.prototype);
  var typedArrayTag = getter(typedArrayProto, Symbol.toStringTag);
  var typedArrayLength = getter(typedArrayProto, 'length');
  var PromisePrototype = Promise.prototype;
  var ErrorPrototype = Error.prototype;

  var MAX_VALUES = HOST.MAX_VALUES;
  var MAX_PROPERTIES = HOST.MAX_PROPERTIES;
  var MAX_DEPTH = HOST.MAX_DEPTH;
  var MAX_STRING = HOST.MAX_STRING_UNITS;
  var MAX_MESSAGE = HOST.MAX_MESSAGE_UNITS;
  var UNSERIALIZABLE = '[Unserializable]';
  var PROMISE = HOST.UNAWAITED_PROMISE_TEXT;
  var PREFIXES = { info: '[info] ', warn: '[warn] ', error: '[error] ', debug: '[debug] ' };

  function isHighSurrogate(code) {
    return code >= 0xd800 && code <= 0xdbff;
  }

  /* Cut to at most max units, never leaving half of a surrogate pair; the ellipsis counts. */
  function clip(text, max) {
    if (text.length <= max) return text;
    var end = max - 1;
    if (end > 0 && isHighSurrogate(charCodeAt(text, end - 1))) end -= 1;
    return stringSlice(text, 0, end) + '\u2026';
  }

  /* Own data value or an accessor mark; never calls a getter. */
  function readOwn(target, key) {
    var descriptor = getOwnDescriptor(target, key);
    if (!descriptor) return { found: false };
    if (hasOwn(descriptor, 'value')) return { found: true, value: descriptor.value, enumerable: descriptor.enumerable };
    return { found: true, accessor: true, enumerable: descriptor.enumerable };
  }

  /* Data value found along the prototype chain (bounded), never calling a getter. */
  function readInherited(target, key) {
    var current = target;
    for (var hops = 0; current !== null && hops < 32; hops++) {
      var own = readOwn(current, key);
      if (own.found) return own.accessor ? undefined : own.value;
      current = getPrototypeOf(current);
    }
    return undefined;
  }

  function inheritsFrom(target, proto) {
    if (target === proto) return true;
    var current = getPrototypeOf(target);
    for (var hops = 0; current !== null && hops < 32; hops++) {
      if (current === proto) return true;
      current = getPrototypeOf(current);
    }
    return false;
  }

  function brand(check, value) {
    try {
      check(value);
      return true;
    } catch {
      return false;
    }
  }

  function errorText(target) {
    var name = readInherited(target, 'name');
    var message = readInherited(target, 'message');
    name = typeof name === 'string' ? name : 'Error';
    message = typeof message === 'string' ? message : '';
    return clip(message ? name + ': ' + message : name, MAX_STRING);
  }

  /* Object literals define their properties, so no inherited setter can intercept them. */
  function newWriter() {
    return { text: '', full: false };
  }
  function write(out, piece) {
    if (out.full) return;
    out.text = out.text + piece;
    if (out.text.length > MAX_MESSAGE) out.full = true;
  }

  /* The text of a value that is not an object: top level bare, nested as JSON (placeholders quoted). */
  function primitive(value, top) {
    switch (typeof value) {
      case 'string':
        return top ? clip(value, MAX_STRING) : jsonStringify(clip(value, MAX_STRING));
      case 'number':
        if (top) return objectIs(value, -0) ? '-0' : toStr(value);
        return isFiniteNumber(value) ? (objectIs(value, -0) ? '0' : toStr(value)) : 'null';
      case 'boolean':
        return value ? 'true' : 'false';
      case 'bigint':
        return placeholder(clip(toStr(value), MAX_STRING) + 'n', top);
      case 'symbol':
        return placeholder(clip(toStr(value), MAX_STRING), top);
      case 'undefined':
        return placeholder('undefined', top);
      case 'function':
        return placeholder('[Function]', top);
      default:
        return null;
    }
  }

  function placeholder(text, top) {
    return top ? text : jsonStringify(text);
  }

  function writeEntry(out, entry, depth, ancestors) {
    if (entry.accessor) write(out, '"[Accessor]"');
    else inspect(out, entry.value, depth, ancestors, false);
  }

  function writeArray(out, target, depth, ancestors) {
    var lengthEntry = readOwn(target, 'length');
    var length = lengthEntry.found && !lengthEntry.accessor ? lengthEntry.value : 0;
    write(out, '[');
    var shown = length < MAX_PROPERTIES ? length : MAX_PROPERTIES;
    for (var i = 0; i < shown && !out.full; i++) {
      if (i > 0) write(out, ',');
      var entry = readOwn(target, toStr(i));
      if (!entry.found) write(out, 'null');
      else writeEntry(out, entry, depth, ancestors);
    }
    if (length > shown) write(out, ',... ' + (length - shown) + ' more items');
    write(out, ']');
  }

  /* A typed array as JSON.stringify shows it ({"0":…}), without listing every index key. */
  function writeTypedArray(out, target) {
    var length = typedArrayLength(target);
    var shown = length < MAX_PROPERTIES ? length : MAX_PROPERTIES;
    write(out, '{');
    for (var i = 0; i < shown && !out.full; i++) {
      if (i > 0) write(out, ',');
      write(out, jsonStringify(toStr(i)) + ':');
      inspect(out, target[i], MAX_DEPTH, null, false);
    }
    if (length > shown) write(out, ',... ' + (length - shown) + ' more properties');
    write(out, '}');
  }

  function writeObject(out, target, depth, ancestors) {
    var keys = ownKeys(target);
    write(out, '{');
    var shown = 0;
    for (var i = 0; i < keys.length && !out.full; i++) {
      if (typeof keys[i] !== 'string') continue;
      var entry = readOwn(target, keys[i]);
      if (!entry.found || !entry.enumerable) continue;
      if (shown === MAX_PROPERTIES) {
        write(out, ',... ' + (keys.length - i) + ' more properties');
        break;
      }
      if (shown > 0) write(out, ',');
      write(out, jsonStringify(clip(keys[i], MAX_STRING)) + ':');
      writeEntry(out, entry, depth, ancestors);
      shown++;
    }
    write(out, '}');
  }

  function inspect(out, value, depth, ancestors, top) {
    var mark = out.text.length;
    try {
      if (value === null) {
        write(out, 'null');
        return;
      }
      var simple = primitive(value, top);
      if (simple !== null) {
        write(out, simple);
        return;
      }
      for (var link = ancestors; link !== null; link = link.parent) {
        if (link.value === value) {
          write(out, '"[Circular]"');
          return;
        }
      }
      if (inheritsFrom(value, PromisePrototype)) {
        write(out, placeholder(PROMISE, top));
        return;
      }
      if (inheritsFrom(value, ErrorPrototype)) {
        write(out, placeholder(errorText(value), top));
        return;
      }
      if (brand(dateGetTime, value)) {
        var time = dateGetTime(value);
        write(out, time === time ? jsonStringify(dateToISOString(value)) : 'null');
        return;
      }
      if (depth >= MAX_DEPTH) {
        write(out, '"[truncated]"');
        return;
      }
      var chain = { value: value, parent: ancestors };
      if (typedArrayTag(value) !== undefined) writeTypedArray(out, value);
      else if (isArray(value)) writeArray(out, value, depth + 1, chain);
      else writeObject(out, value, depth + 1, chain);
    } catch {
      /* Roll back whatever this value half-wrote, then say it failed. */
      out.text = stringSlice(out.text, 0, mark);
      out.full = false;
      write(out, placeholder(UNSERIALIZABLE, top));
    }
  }

  return function format(method, args) {
    var out = newWriter();
    try {
      write(out, hasOwn(PREFIXES, method) ? PREFIXES[method] : '');
      var count = args.length;
      var shown = count < MAX_VALUES ? count : MAX_VALUES;
      for (var i = 0; i < shown && !out.full; i++) {
        if (i > 0) write(out, ' ');
        inspect(out, args[i], 0, null, true);
      }
      if (count > shown) write(out, ' ... ' + (count - shown) + ' more arguments');
      return clip(out.text, MAX_MESSAGE);
    } catch {
      return UNSERIALIZABLE;
    }
  };
})();
