/**
 * Guest prelude: an expression evaluating to `install(out, request, cancel, inspect)`. The host
 * calls it once before user code, passing its raw functions as arguments (they never touch the
 * global object), and keeps handles to the functions of the returned object:
 * `settle(id, ok, payloadJson)` (returns an error description when a timer callback threw),
 * `serialize(value)` → compact JSON text, `describe(thrown)` → JSON `{name,message,stack}`
 * or `{text}`, `defineCatalog(catalogJson, prepareOnly, byIndex)` (this run's GuestCatalog: tool globals, `catalog.all()`,
 * `MCP`; see `tool-api.guest.js`), and `unhandled()` → the description of a rejected bridge call no
 * handler was attached to (or undefined). Every intrinsic it relies on is captured here, before
 * user code can replace it. Tool handles serialize to their metadata (a captured WeakMap).
 */
(function () {
  'use strict';
  const G = globalThis;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const objectKeys = Object.keys;
  const isArray = Array.isArray;
  const isFinite = Number.isFinite;
  const ObjectProto = Object.prototype;
  const S = String;
  const GuestMap = Map;
  const MapGet = uncurry(Map.prototype.get);
  const MapSet = uncurry(Map.prototype.set);
  const MapHas = uncurry(Map.prototype.has);
  const GuestWeakMap = WeakMap;
  const WeakMapGet = uncurry(WeakMap.prototype.get);
  const GuestWeakSet = WeakSet;
  const WeakSetAdd = uncurry(WeakSet.prototype.add);
  const WeakSetHas = uncurry(WeakSet.prototype.has);
  const GuestPromise = Promise;
  const PromiseThenCall = uncurry(Promise.prototype.then);
  const construct = Reflect.construct;
  const GuestError = Error;
  const GuestTypeError = TypeError;
  const errorTypes = { __proto__: null, Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
  const installToolApi = HOST.TOOL_API;

  return function install(out, hostRequest, hostCancel, inspect) {
    const pending = { __proto__: null };
    const timers = { __proto__: null };
    let nextTimerId = 0;
    // Tool handle → its frozen metadata: what a handle serializes to (JSON drops functions).
    const handles = new GuestWeakMap();
    // Errors the host answered a store/load request with: uncaught, they fail the cell in phase
    // bridge (SPEC §4), whoever rethrows them.
    const storeErrors = new GuestWeakSet();

    function prop(value, enumerable) {
      return { __proto__: null, value, enumerable, configurable: true, writable: true };
    }

    // Errors become {name, message, ...own}; promises a marker; plain objects and arrays are
    // copied so nested ones are projected too (cycles stay cycles and fail JSON.stringify). Past
    // HOST.MAX_JSON_DEPTH levels the copy ends in an empty array one level too deep: the text stays
    // bounded and the host refuses it with SPEC §10's depth error, before JSON.stringify could overflow.
    function project(value, seen, depth = 0) {
      if (typeof value === 'function') {
        const meta = WeakMapGet(handles, value);
        return meta === undefined ? value : meta;
      }
      if (value instanceof GuestPromise) return HOST.UNAWAITED_PROMISE_TEXT;
      if (value === null || typeof value !== 'object') return value;
      if (MapHas(seen, value)) return MapGet(seen, value);
      const isError = value instanceof GuestError;
      const array = isArray(value);
      const proto = getPrototypeOf(value);
      if (!isError && !array && proto !== ObjectProto && proto !== null) return value;
      if (depth >= HOST.MAX_JSON_DEPTH) return [];
      const copy = array ? [] : isError ? { name: value.name, message: value.message } : {};
      MapSet(seen, value, copy);
      if (array) copy.length = value.length;
      const keys = objectKeys(value);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (isError && key === 'toJSON') continue;
        defineProperty(copy, key, prop(project(value[key], seen, depth + 1), true));
      }
      return copy;
    }

    // Why a serialization threw, as text: a guest's own throw may itself throw when made a string.
    function reasonOf(error) {
      try {
        return error instanceof GuestError ? S(error.message) : S(error);
      } catch {
        return 'unknown reason';
      }
    }

    function serialize(value) {
      let text;
      try {
        text = JSONStringify(project(value, new GuestMap()));
      } catch (error) {
        throw new GuestTypeError('code mode result is not JSON-serializable: ' + reasonOf(error));
      }
      return typeof text === 'string' ? text : 'null';
    }

    // Strict JSON of a value to send (a cycle or BigInt throws); undefined/functions become null.
    function strictJson(value) {
      const text = JSONStringify(project(value, new GuestMap()));
      return typeof text === 'string' ? text : 'null';
    }

    function safeJson(value) {
      if (value === undefined) return 'null';
      try {
        const text = JSONStringify(project(value, new GuestMap()));
        if (typeof text === 'string') return text;
      } catch {
        // Not representable as JSON: the value's own text below.
      }
      try {
        if (value instanceof GuestError) return JSONStringify({ __proto__: null, name: S(value.name), message: S(value.message) });
        return JSONStringify(S(value));
      } catch {
        return '"[Unserializable]"';
      }
    }

    function describe(thrown) {
      try {
        if (thrown instanceof GuestError) {
          let name = 'Error',
            message = '',
            stack = '';
          try {
            name = S(thrown.name);
          } catch {
            // A throwing getter leaves the default.
          }
          try {
            message = S(thrown.message);
          } catch {
            // A throwing getter leaves the default.
          }
          try {
            const s = thrown.stack;
            if (typeof s === 'string') stack = s;
          } catch {
            // A throwing getter leaves the default.
          }
          const record = { __proto__: null, name, message, stack };
          if (WeakSetHas(storeErrors, thrown)) record.bridge = true;
          return JSONStringify(record);
        }
        return JSONStringify({ __proto__: null, text: S(thrown) });
      } catch {
        return '{"text":"[unreadable thrown value]"}';
      }
    }

    // One bridge request: the host returns its id; settle() later runs the entry's callback.
    function begin(method, argsJson, onSettle) {
      const id = hostRequest(method, argsJson);
      pending[id] = onSettle;
      return id;
    }

    // Bridge promises are a Promise subclass whose then records that a handler was attached
    // (await, Promise.all/race, .catch and .finally all reach it), so a rejected call nobody
    // handled fails the cell at completion. Derived promises are plain (species).
    // Weakly held: a bridge promise nobody references any more needs no entry (only rejected ones are
    // asked about, and `rejected` holds those).
    const handled = new GuestWeakSet();
    const rejected = [];
    const BridgePromise = class Promise extends GuestPromise {
      static get [Symbol.species]() {
        return GuestPromise;
      }
      then(onFulfilled, onRejected) {
        if (this !== null && typeof this === 'object') WeakSetAdd(handled, this);
        return PromiseThenCall(this, onFulfilled, onRejected);
      }
    };
    // `new BridgePromise(executor)` without running the subclass's (default) constructor: same
    // object, same prototype.
    const newBridgePromise = (executor) => construct(GuestPromise, [executor], BridgePromise);

    function toError(payload) {
      const Type = errorTypes[payload && payload.name] || GuestError;
      const error = new Type(payload && typeof payload.message === 'string' ? payload.message : 'bridge call failed');
      if (!errorTypes[payload && payload.name] && payload && typeof payload.name === 'string') {
        defineProperty(error, 'name', prop(payload.name, false));
      }
      return error;
    }

    // One bridge call with its args as JSON text; map turns the host's value into the guest's answer.
    function call(method, argsJson, map) {
      let promise;
      promise = newBridgePromise((resolve, reject) => {
        begin(method, argsJson, (ok, payload) => {
          let error;
          if (ok) {
            if (map === undefined) return resolve(payload);
            try {
              return resolve(map(payload));
            } catch (thrown) {
              error = thrown;
            }
          } else {
            error = toError(payload);
            if (method === 'store' || method === 'load') WeakSetAdd(storeErrors, error);
          }
          rejected[rejected.length] = { promise, error };
          reject(error);
        });
      });
      return promise;
    }

    // A bridge promise already rejected with error (a failure to report like a failed call).
    function fail(error) {
      const promise = newBridgePromise((resolve, reject) => reject(error));
      rejected[rejected.length] = { promise, error };
      return promise;
    }

    const toUndefined = () => undefined;

    // The first rejected bridge promise no handler was ever attached to, described; or undefined.
    function unhandled() {
      for (let i = 0; i < rejected.length; i++) {
        if (!WeakSetHas(handled, rejected[i].promise)) return describe(rejected[i].error);
      }
      return undefined;
    }

    function settle(id, ok, payloadJson) {
      const entry = pending[id];
      if (entry === undefined) return undefined;
      delete pending[id];
      try {
        entry(ok, JSONParse(payloadJson));
      } catch (error) {
        return describe(error);
      }
      return undefined;
    }

    function setTimeout(callback, delay, ...args) {
      if (typeof callback !== 'function') throw new GuestTypeError('setTimeout callback must be a function');
      if (delay === undefined) delay = 0;
      if (typeof delay !== 'number' || !isFinite(delay) || delay < 0) {
        throw new GuestTypeError(HOST.SET_TIMEOUT_DELAY_MESSAGE);
      }
      const timerId = ++nextTimerId;
      timers[timerId] = begin('sleep', '[' + JSONStringify(delay) + ']', () => {
        if (timers[timerId] === undefined) return;
        delete timers[timerId];
        apply(callback, G, args);
      });
      return timerId;
    }

    function clearTimeout(timerId) {
      const key = typeof timerId === 'number' ? timerId : NaN;
      const id = timers[key];
      if (id === undefined) return;
      delete timers[key];
      delete pending[id];
      hostCancel(id);
    }

    const consoleObject = {};
    const methods = ['log', 'info', 'warn', 'error', 'debug'];
    for (let i = 0; i < methods.length; i++) {
      const method = methods[i];
      defineProperty(
        consoleObject,
        method,
        prop(function (...args) {
          out(2, inspect(method, args));
        }, true),
      );
    }

    const globals = {
      __proto__: null,
      text(value) {
        out(0, typeof value === 'string' ? value : safeJson(value));
      },
      json(value) {
        out(1, safeJson(value));
      },
      console: consoleObject,
      setTimeout,
      clearTimeout,
      yield_control(reason) {
        return call('yield', '[' + safeJson(reason === undefined ? null : reason) + ']', toUndefined);
      },
    };
    const names = objectKeys(globals);
    for (let i = 0; i < names.length; i++) defineProperty(G, names[i], prop(globals[names[i]], false));

    const defineCatalog = installToolApi({
      __proto__: null,
      call,
      fail,
      safeJson,
      strictJson,
      reasonOf,
      handles,
      defineGlobal(name, value) {
        defineProperty(G, name, prop(value, false));
      },
    });

    return { __proto__: null, settle, serialize, describe, unhandled, defineCatalog };
  };
})();
