/**
 * Guest source of SPEC §4's `results`, `store` and `load` and SPEC §15's platform surfaces
 * `skills`, `nodes` and `agents`: each call is a bridge request (`results`, `store` and `load` their
 * own methods; the others a `callValue` whose tool is the dotted surface name, so the host treats
 * it as any tool call). A function expression `tool-api.guest.js` embeds and calls from
 * `installToolApi` (so before any user code), passing its bridge primitives and helpers:
 * `call`, `fail`, `safeJson`, `strictJson`, `reasonOf` (as the prelude's kit), `defineFixed(target, key, value,
 * enumerable)` and `callInvoker(callableName)`. Every intrinsic is captured when it runs. Returns
 * the surfaces' objects and functions, frozen; `tool-api.guest.js` defines them as globals.
 */
/* exported installPlatformSurfaces -- tool-api.guest.js embeds this function as an expression */
function installPlatformSurfaces(kit) {
  'use strict';
  const JSONStringify = JSON.stringify;
  const freeze = Object.freeze;
  const isArray = Array.isArray;
  const GuestTypeError = TypeError;
  const call = kit.call,
    fail = kit.fail,
    safeJson = kit.safeJson,
    strictJson = kit.strictJson,
    reasonOf = kit.reasonOf,
    defineFixed = kit.defineFixed,
    callInvoker = kit.callInvoker;

  // A stored value is serialized strictly: what JSON cannot represent rejects instead of being mangled.
  function valueJson(value) {
    try {
      return strictJson(value);
    } catch (error) {
      throw new GuestTypeError(HOST.VALUE_NOT_SERIALIZABLE_PREFIX + reasonOf(error));
    }
  }

  const resultsObject = freeze({
    __proto__: null,
    save(value) {
      let json;
      try {
        json = valueJson(value);
      } catch (error) {
        return fail(error);
      }
      return call('resultSave', '{"value":' + json + '}');
    },
    load(id) {
      return call('resultLoad', '{"id":' + safeJson(id) + '}');
    },
    delete(id) {
      return call('resultDelete', '{"id":' + safeJson(id) + '}');
    },
  });

  // SPEC §4: only a string is a key. Anything else (an object with toJSON, a number, a symbol) is
  // sent as null, never converted, and the host refuses it with its TypeError.
  function keyJson(key) {
    return typeof key === 'string' ? JSONStringify(key) : 'null';
  }

  function store(key, value) {
    const keyText = keyJson(key);
    if (value === undefined) return call('store', '{"key":' + keyText + ',"delete":true}', () => undefined);
    let json;
    try {
      json = valueJson(value);
    } catch (error) {
      return fail(error);
    }
    return call('store', '{"key":' + keyText + ',"value":' + json + '}', () => undefined);
  }

  function load(key) {
    return call('load', '{"key":' + keyJson(key) + '}', (answer) =>
      answer !== null && typeof answer === 'object' && answer.found === true ? answer.value : undefined,
    );
  }

  // SPEC §15: skills.list() and skills.read(name) are the tool calls `skills.list` / `skills.read`.
  const skillsListArgs = '{"tool":"skills.list","input":{}}';
  const skillsObject = freeze({
    __proto__: null,
    list() {
      return call('callValue', skillsListArgs);
    },
    read(name) {
      return call('callValue', '{"tool":"skills.read","input":{"name":' + safeJson(name) + '}}');
    },
  });

  // SPEC §15: nodes.list() and nodes.get(idOrName) are the calls `nodes.list` / `nodes.get`; the
  // handle get() answers carries invoke(command, params?) and, when the node offers fs.listDir,
  // listDir(path): both the call `nodes.invoke`, naming the node by the id it resolved to.
  const nodesListArgs = '{"tool":"nodes.list","input":{}}';
  function nodeHandle(answer) {
    const node = answer !== null && typeof answer === 'object' ? answer : { __proto__: null };
    const id = typeof node.id === 'string' ? node.id : '';
    const commands = isArray(node.commands) ? node.commands : [];
    let listsDirs = false;
    for (let i = 0; i < commands.length; i++) if (commands[i] === 'fs.listDir') listsDirs = true;
    const prefix = '{"tool":"nodes.invoke","input":{"node":' + JSONStringify(id) + ',"command":';
    const handle = { __proto__: null };
    defineFixed(handle, 'id', id, true);
    defineFixed(handle, 'name', typeof node.name === 'string' ? node.name : '', true);
    defineFixed(
      handle,
      'invoke',
      function invoke(command, params) {
        return call('callValue', prefix + safeJson(command) + ',"params":' + (params === undefined ? '{}' : safeJson(params)) + '}}');
      },
      false,
    );
    if (listsDirs) {
      defineFixed(
        handle,
        'listDir',
        function listDir(path) {
          return call('callValue', prefix + '"fs.listDir","params":{"path":' + safeJson(path) + '}}}');
        },
        false,
      );
    }
    return freeze(handle);
  }
  const nodesObject = freeze({
    __proto__: null,
    list() {
      return call('callValue', nodesListArgs);
    },
    get(idOrName) {
      return call('callValue', '{"tool":"nodes.get","input":{"idOrName":' + safeJson(idOrName) + '}}', nodeHandle);
    },
  });

  // agents.run(input) is the call `agents.run`, with the input as a tool's (absent → {}).
  const runAgent = callInvoker('agents.run');
  const agentsObject = freeze({
    __proto__: null,
    run(input) {
      return runAgent([input]);
    },
  });

  return freeze({
    __proto__: null,
    results: resultsObject,
    store,
    load,
    skills: skillsObject,
    nodes: nodesObject,
    agents: agentsObject,
  });
}
