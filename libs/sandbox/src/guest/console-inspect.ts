/**
 * Guest-side console formatting (SPEC §3 Output, §4 `console`).
 *
 * `CONSOLE_INSPECT_SOURCE` is an ES2020 *expression*. Evaluated inside QuickJS before user code,
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
 * Shape: top-level strings print raw; everything else prints JSON-like (plain JSON data prints
 * exactly as `JSON.stringify` would), with bare placeholders for what JSON cannot say:
 * `[Circular]`, `[Getter]`, `[Setter]`, `[Getter/Setter]`, `[Promise]`, `[Function: name]`,
 * `[Object]`/`[Array]` past the depth cap, `[Unserializable]` for failures. Non-log methods are
 * prefixed `[info] `, `[warn] `, `[error] `, `[debug] `; `%s` is left literal.
 */

/** Limits of one console call (SPEC §3 Output). Exported so tests and docs use one source. */
export const CONSOLE_INSPECT_LIMITS = {
  maxValues: 100,
  maxProperties: 50,
  maxDepth: 4,
  maxStringUnits: 512,
  maxMessageUnits: 4096,
} as const;

const L = CONSOLE_INSPECT_LIMITS;

export const CONSOLE_INSPECT_SOURCE: string = `(function () {
  "use strict";
  var FunctionCall = Function.prototype.call;
  var bindCall = FunctionCall.bind.bind(FunctionCall);
  var O = Object;
  var getOwnDescriptor = O.getOwnPropertyDescriptor;
  var getPrototypeOf = O.getPrototypeOf;
  var ownKeys = Reflect.ownKeys;
  var objectIs = O.is;
  var isArray = Array.isArray;
  var toStr = String;
  var jsonStringify = JSON.stringify;
  var hasOwn = bindCall(O.prototype.hasOwnProperty);
  var stringSlice = bindCall(String.prototype.slice);
  var charCodeAt = bindCall(String.prototype.charCodeAt);
  function getter(proto, name) { return bindCall(getOwnDescriptor(proto, name).get); }
  var dateGetTime = bindCall(Date.prototype.getTime);
  var dateToISOString = bindCall(Date.prototype.toISOString);
  var regexpSource = getter(RegExp.prototype, "source");
  var regexpFlagGetters = [];
  var regexpFlagNames = [["hasIndices", "d"], ["global", "g"], ["ignoreCase", "i"], ["multiline", "m"],
    ["dotAll", "s"], ["unicode", "u"], ["sticky", "y"]];
  for (var f = 0; f < regexpFlagNames.length; f++) {
    var flagDescriptor = getOwnDescriptor(RegExp.prototype, regexpFlagNames[f][0]);
    if (flagDescriptor && flagDescriptor.get) {
      regexpFlagGetters[regexpFlagGetters.length] = [bindCall(flagDescriptor.get), regexpFlagNames[f][1]];
    }
  }
  var mapSize = getter(Map.prototype, "size");
  var mapEntries = bindCall(Map.prototype.entries);
  var mapIteratorNext = bindCall(getPrototypeOf(new Map().entries()).next);
  var setSize = getter(Set.prototype, "size");
  var setValues = bindCall(Set.prototype.values);
  var setIteratorNext = bindCall(getPrototypeOf(new Set().values()).next);
  var weakMapHas = bindCall(WeakMap.prototype.has);
  var weakSetHas = bindCall(WeakSet.prototype.has);
  var arrayBufferByteLength = getter(ArrayBuffer.prototype, "byteLength");
  var typedArrayProto = getPrototypeOf(Uint8Array.prototype);
  var typedArrayTag = getter(typedArrayProto, Symbol.toStringTag);
  var typedArrayLength = getter(typedArrayProto, "length");
  var PromisePrototype = Promise.prototype;
  var ErrorPrototype = Error.prototype;
  var ObjectPrototype = O.prototype;

  var MAX_VALUES = ${L.maxValues};
  var MAX_PROPERTIES = ${L.maxProperties};
  var MAX_DEPTH = ${L.maxDepth};
  var MAX_STRING = ${L.maxStringUnits};
  var MAX_MESSAGE = ${L.maxMessageUnits};
  var UNSERIALIZABLE = "[Unserializable]";
  var PREFIXES = { info: "[info] ", warn: "[warn] ", error: "[error] ", debug: "[debug] " };

  function isHighSurrogate(code) { return code >= 0xd800 && code <= 0xdbff; }

  /* Cut to at most max units, never leaving half of a surrogate pair; the ellipsis counts. */
  function clip(text, max) {
    if (text.length <= max) return text;
    var end = max - 1;
    if (end > 0 && isHighSurrogate(charCodeAt(text, end - 1))) end -= 1;
    return stringSlice(text, 0, end) + "\\u2026";
  }

  /* Own data value or undefined; reports accessors without calling them. */
  function readOwn(target, key) {
    var descriptor = getOwnDescriptor(target, key);
    if (!descriptor) return { found: false };
    if (hasOwn(descriptor, "value")) return { found: true, value: descriptor.value, enumerable: descriptor.enumerable };
    var placeholder = descriptor.get ? (descriptor.set ? "[Getter/Setter]" : "[Getter]") : "[Setter]";
    return { found: true, accessor: placeholder, enumerable: descriptor.enumerable };
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
    var current = getPrototypeOf(target);
    for (var hops = 0; current !== null && hops < 32; hops++) {
      if (current === proto) return true;
      current = getPrototypeOf(current);
    }
    return false;
  }

  function brand(check, value) {
    try { check(value); return true; } catch (e) { return false; }
  }

  function functionName(fn) {
    var name = readOwn(fn, "name");
    return name.found && !name.accessor && typeof name.value === "string" ? name.value : "";
  }

  function constructorName(target) {
    var proto = getPrototypeOf(target);
    if (proto === null) return null;
    if (proto === ObjectPrototype) return "";
    var ctor = readOwn(proto, "constructor");
    if (!ctor.found || ctor.accessor || typeof ctor.value !== "function") return "";
    return functionName(ctor.value);
  }

  function primitive(value, top) {
    switch (typeof value) {
      case "string": return top ? clip(value, MAX_STRING) : jsonStringify(clip(value, MAX_STRING));
      case "number": return objectIs(value, -0) ? "-0" : toStr(value);
      case "bigint": return toStr(value) + "n";
      case "symbol": return toStr(value);
      case "boolean": return value ? "true" : "false";
      case "undefined": return "undefined";
      default: return null;
    }
  }

  /* Object literals define their properties, so no inherited setter can intercept them. */
  function newWriter() { return { text: "", full: false }; }
  function write(out, piece) {
    if (out.full) return;
    out.text = out.text + piece;
    if (out.text.length > MAX_MESSAGE) out.full = true;
  }

  function propertyKey(key) {
    return typeof key === "symbol" ? "[" + toStr(key) + "]" : jsonStringify(key);
  }

  function writeEntry(out, entry, depth, ancestors) {
    if (entry.accessor) write(out, entry.accessor);
    else inspect(out, entry.value, depth, ancestors, false);
  }

  function writeArrayLike(out, target, length, depth, ancestors) {
    write(out, "[");
    var shown = length < MAX_PROPERTIES ? length : MAX_PROPERTIES;
    for (var i = 0; i < shown && !out.full; i++) {
      if (i > 0) write(out, ",");
      var entry = readOwn(target, toStr(i));
      if (!entry.found) write(out, "<empty>");
      else writeEntry(out, entry, depth, ancestors);
    }
    if (length > shown) write(out, ",... " + (length - shown) + " more items");
    write(out, "]");
  }

  function writeObject(out, target, depth, ancestors) {
    var keys = ownKeys(target);
    write(out, "{");
    var shown = 0;
    for (var i = 0; i < keys.length && !out.full; i++) {
      var entry = readOwn(target, keys[i]);
      if (!entry.found || !entry.enumerable) continue;
      if (shown === MAX_PROPERTIES) {
        write(out, ",... " + (keys.length - i) + " more properties");
        break;
      }
      if (shown > 0) write(out, ",");
      write(out, propertyKey(keys[i]) + ":");
      writeEntry(out, entry, depth, ancestors);
      shown++;
    }
    write(out, "}");
  }

  function writeCollection(out, label, size, iterator, next, pairs, depth, ancestors) {
    write(out, label + "(" + size + ") {");
    for (var i = 0; i < MAX_PROPERTIES && !out.full; i++) {
      var step = next(iterator);
      if (step.done) break;
      if (i > 0) write(out, ",");
      if (pairs) {
        inspect(out, step.value[0], depth, ancestors, false);
        write(out, " => ");
        inspect(out, step.value[1], depth, ancestors, false);
      } else {
        inspect(out, step.value, depth, ancestors, false);
      }
    }
    if (size > MAX_PROPERTIES) write(out, ",... " + (size - MAX_PROPERTIES) + " more items");
    write(out, "}");
  }

  function errorText(target) {
    var name = readInherited(target, "name");
    var message = readInherited(target, "message");
    name = typeof name === "string" ? name : "Error";
    message = typeof message === "string" ? message : "";
    return clip(message ? name + ": " + message : name, MAX_STRING);
  }

  /* Objects whose form does not depend on depth; null when target is none of them. */
  function special(target, top) {
    if (typeof target === "function") {
      var name = functionName(target);
      return name ? "[Function: " + clip(name, MAX_STRING) + "]" : "[Function (anonymous)]";
    }
    if (brand(dateGetTime, target)) {
      var time = dateGetTime(target);
      return time === time ? dateToISOString(target) : "Invalid Date";
    }
    if (brand(regexpSource, target)) {
      var flags = "";
      for (var i = 0; i < regexpFlagGetters.length; i++) {
        if (regexpFlagGetters[i][0](target)) flags += regexpFlagGetters[i][1];
      }
      return clip("/" + regexpSource(target) + "/" + flags, MAX_STRING);
    }
    if (brand(function (v) { weakMapHas(v, ObjectPrototype); }, target)) return "WeakMap { <items unknown> }";
    if (brand(function (v) { weakSetHas(v, ObjectPrototype); }, target)) return "WeakSet { <items unknown> }";
    if (brand(arrayBufferByteLength, target)) return "ArrayBuffer { byteLength: " + arrayBufferByteLength(target) + " }";
    if (target === PromisePrototype || inheritsFrom(target, PromisePrototype)) return "[Promise]";
    if (inheritsFrom(target, ErrorPrototype)) {
      var text = errorText(target);
      return top ? text : "[" + text + "]";
    }
    return null;
  }

  function inspect(out, value, depth, ancestors, top) {
    var mark = out.text.length;
    try {
      if (value === null) { write(out, "null"); return; }
      var simple = primitive(value, top);
      if (simple !== null) { write(out, simple); return; }
      for (var link = ancestors; link !== null; link = link.parent) {
        if (link.value === value) { write(out, "[Circular]"); return; }
      }
      var form = special(value, top);
      if (form !== null) { write(out, form); return; }
      var tag = typedArrayTag(value);
      var array = tag === undefined && isArray(value);
      if (depth >= MAX_DEPTH) { write(out, array || tag !== undefined ? "[Array]" : "[Object]"); return; }
      var chain = { value: value, parent: ancestors };
      if (tag !== undefined) {
        write(out, tag + "(" + typedArrayLength(value) + ") ");
        writeArrayLike(out, value, typedArrayLength(value), depth + 1, chain);
      } else if (array) {
        var length = readOwn(value, "length");
        writeArrayLike(out, value, length.found && !length.accessor ? length.value : 0, depth + 1, chain);
      } else if (brand(mapSize, value)) {
        writeCollection(out, "Map", mapSize(value), mapEntries(value), mapIteratorNext, true, depth + 1, chain);
      } else if (brand(setSize, value)) {
        writeCollection(out, "Set", setSize(value), setValues(value), setIteratorNext, false, depth + 1, chain);
      } else {
        var ctor = constructorName(value);
        if (ctor === null) write(out, "[Object: null prototype] ");
        else if (ctor) write(out, clip(ctor, MAX_STRING) + " ");
        writeObject(out, value, depth + 1, chain);
      }
    } catch (error) {
      /* Roll back whatever this value half-wrote, then say it failed. */
      out.text = stringSlice(out.text, 0, mark);
      out.full = false;
      write(out, UNSERIALIZABLE);
    }
  }

  return function format(method, args) {
    var out = newWriter();
    try {
      write(out, hasOwn(PREFIXES, method) ? PREFIXES[method] : "");
      var count = args.length;
      var shown = count < MAX_VALUES ? count : MAX_VALUES;
      for (var i = 0; i < shown && !out.full; i++) {
        if (i > 0) write(out, " ");
        inspect(out, args[i], 0, null, true);
      }
      if (count > shown) write(out, " ... " + (count - shown) + " more arguments");
      return clip(out.text, MAX_MESSAGE);
    } catch (error) {
      return UNSERIALIZABLE;
    }
  };
})()`;
