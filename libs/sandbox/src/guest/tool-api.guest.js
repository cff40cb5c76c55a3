/**
 * Guest source of the tool-facing API (SPEC §4): `catalog`, tool handles and the tool globals,
 * `API`, `MCP`/`namespaces`, and the globals of `platform-surfaces.guest.js` (`results`,
 * `store`/`load`, SPEC §15's `nodes`, `skills` and, when the run's catalog lists `agents.run`,
 * `agents`), which it embeds. It is a function expression the prelude
 * embeds and calls from `install` (so before any user code), passing its bridge primitives:
 *
 * - `kit.call(method, argsJson, map?)` → a bridge promise; `map` turns the host's JSON answer into
 *   the guest's value (a throw rejects the promise);
 * - `kit.fail(error)` → a bridge promise rejected with `error` (tracked like a failed call);
 * - `kit.safeJson(value)` → lenient JSON text (never throws), `kit.strictJson(value)` → JSON text
 *   or throws the reason (both map handles to their metadata), `kit.reasonOf(error)` → that reason
 *   as text (never throws);
 * - `kit.handles` — the WeakMap handle → frozen metadata the serializers consult;
 * - `kit.defineGlobal(name, value)`.
 *
 * Every intrinsic is captured when `installToolApi` runs. Args are built as JSON text by parts,
 * so the envelope (`{tool, input}`, …) stays well-formed whatever the guest passes; only the
 * guest's own values are serialized (leniently for tool inputs, strictly for stored values).
 * Returns `defineCatalog(catalogJson, prepareOnly, byIndex)`, which the host calls once per run
 * with its GuestCatalog (its `surfaces` decide whether `agents` is installed; null for the prepared
 * one; `byIndex` when the host named prepared globals in it by index), and, with `prepareOnly`,
 * once while the boot image is made, with the deployment's catalog, to build its handles ahead.
 */
/* exported installToolApi -- the prelude embeds this function as an expression */
function installToolApi(kit) {
  'use strict';
  const G = globalThis;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const objectKeys = Object.keys;
  const isArray = Array.isArray;
  const S = String;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const hasOwn = uncurry(Object.prototype.hasOwnProperty);
  const MapGet = uncurry(Map.prototype.get);
  const MapSet = uncurry(Map.prototype.set);
  const WeakMapSet = uncurry(WeakMap.prototype.set);
  const GuestMap = Map;
  const GuestTypeError = TypeError;
  const call = kit.call,
    fail = kit.fail,
    safeJson = kit.safeJson,
    strictJson = kit.strictJson;
  const handles = kit.handles,
    defineGlobal = kit.defineGlobal;
  const META_KEYS = ['callableName', 'toolName', 'label', 'description', 'source', 'apiPath', 'input', 'output', 'trusted'];

  // Read-only own properties, through one reused descriptor (building the catalog is per run).
  const fixed = { __proto__: null, value: undefined, enumerable: true, configurable: false, writable: false };
  function defineFixed(target, key, value, enumerable) {
    fixed.value = value;
    fixed.enumerable = enumerable;
    defineProperty(target, key, fixed);
    fixed.value = undefined;
  }
  function str(value) {
    return JSONStringify(S(value));
  }

  // Arrays are filled by defineProperty, never by assignment (the guest may put index setters on Array.prototype).
  function put(list, index, value) {
    defineProperty(list, index, { __proto__: null, value, enumerable: true, configurable: true, writable: true });
  }

  function deepFreeze(value) {
    if (value !== null && typeof value === 'object') {
      const keys = objectKeys(value);
      for (let i = 0; i < keys.length; i++) deepFreeze(value[keys[i]]);
      freeze(value);
    }
    return value;
  }

  // The metadata fields of a host HandleMetadata, frozen (it is what a handle serializes to).
  function readMeta(raw) {
    // A null-prototype object: plain assignment creates own properties, no setter can intervene.
    const meta = { __proto__: null };
    const source = raw !== null && typeof raw === 'object' ? raw : meta;
    for (let i = 0; i < META_KEYS.length; i++) {
      const key = META_KEYS[i];
      // Own fields only: a missing one must not reach a getter the guest put on Object.prototype.
      const value = hasOwn(source, key) ? source[key] : undefined;
      if (value !== undefined) meta[key] = deepFreeze(value);
    }
    if (typeof meta.callableName !== 'string') meta.callableName = '';
    return freeze(meta);
  }

  // A handle: calling it calls the tool; it carries the metadata and describe().
  function makeHandle(meta, invoke) {
    const handle = (...args) => invoke(args);
    defineProperty(handle, 'name', { __proto__: null, value: meta.callableName, configurable: true });
    for (let i = 0; i < META_KEYS.length; i++) {
      const key = META_KEYS[i];
      if (meta[key] !== undefined) defineFixed(handle, key, meta[key], true);
    }
    const describeArgs = '{"tool":' + str(meta.callableName) + '}';
    defineFixed(
      handle,
      'describe',
      function describe() {
        return call('describe', describeArgs);
      },
      false,
    );
    // JSON.stringify(handle) in the cell gives the metadata too (SPEC §4), not undefined.
    defineFixed(
      handle,
      'toJSON',
      function toJSON() {
        return meta;
      },
      false,
    );
    WeakMapSet(handles, handle, meta);
    return freeze(handle);
  }

  // name(input): a callValue request; an absent (undefined/null) input is sent as {} (OpenClaw: input ?? {}).
  function callInvoker(callableName) {
    const prefix = '{"tool":' + str(callableName) + ',"input":';
    return (args) => {
      const input = args[0];
      return call('callValue', prefix + (input === undefined || input === null ? '{}' : safeJson(input)) + '}');
    };
  }

  // MCP.<server>.<tool>(...args): the raw argument list; the host checks it and applies defaults.
  // callableName (MCP.<server>.<tool> as the guest calls it) names the call in pendingToolCalls.
  function namespaceInvoker(serverName, toolName, callableName) {
    const prefix = '{"server":' + str(serverName) + ',"tool":' + str(toolName) + ',"callableName":' + str(callableName) + ',"args":[';
    return (args) => {
      let text = prefix;
      for (let i = 0; i < args.length; i++) text += (i > 0 ? ',' : '') + safeJson(args[i]);
      return call('namespace', text + ']}');
    };
  }

  // callableName → handle of this run's catalog (globals and MCP tools), so search answers reuse them.
  const byName = new GuestMap();
  let allHandles = freeze([]);

  function handleFor(raw) {
    const meta = readMeta(raw);
    const known = MapGet(byName, meta.callableName);
    if (known !== undefined) return known;
    const handle = makeHandle(meta, callInvoker(meta.callableName));
    MapSet(byName, meta.callableName, handle);
    return handle;
  }

  function toHandles(payload) {
    const list = [];
    if (isArray(payload)) for (let i = 0; i < payload.length; i++) put(list, i, handleFor(payload[i]));
    return freeze(list);
  }

  const catalogObject = freeze({
    __proto__: null,
    search(query, options) {
      let limit;
      if (options !== null && typeof options === 'object') limit = options.limit;
      return call('search', '{"query":' + safeJson(query) + (limit === undefined ? '' : ',"limit":' + safeJson(limit)) + '}', toHandles);
    },
    all() {
      return allHandles;
    },
  });

  const apiObject = freeze({
    __proto__: null,
    list(prefix) {
      return call('api', '{"op":"list"' + (prefix === undefined ? '' : ',"prefix":' + safeJson(prefix)) + '}');
    },
    read(path) {
      return call('api', '{"op":"read","path":' + safeJson(path) + '}');
    },
  });

  // SPEC §4/§15's platform surfaces: results, store/load, skills, nodes, agents (platform-surfaces.guest.js).
  const surfaces = HOST.PLATFORM_SURFACES({
    __proto__: null,
    call,
    fail,
    safeJson,
    strictJson,
    reasonOf: kit.reasonOf,
    defineFixed,
    callInvoker,
  });

  function defineNamespaces(mcp) {
    const namespaces = freeze({ __proto__: null, MCP: mcp });
    defineGlobal('MCP', mcp);
    defineGlobal('namespaces', namespaces);
  }

  defineGlobal('catalog', catalogObject);
  defineGlobal('API', apiObject);
  defineGlobal('results', surfaces.results);
  defineGlobal('store', surfaces.store);
  defineGlobal('load', surfaces.load);
  defineGlobal('skills', surfaces.skills);
  defineGlobal('nodes', surfaces.nodes);
  defineNamespaces(freeze({ __proto__: null }));

  // The deployment's catalog, built while the boot image was made (`defineCatalog(json, true)`).
  // The host sends a run's catalog as null when it is that catalog, and any global of it whose
  // metadata is a prepared global's as `{ prepared: <its index> }`, saying so (`byIndex`: a
  // `prepared` key is read in no other text; engine/prepared-catalog.ts). So the guest neither
  // parses nor builds what the image holds, which was most of a cell's start. Every VM has its own
  // copy with the image; a handle is frozen, its metadata deep-frozen, and a built catalog never
  // changes.
  let preparedBuilt;

  // The handle of the prepared catalog's global `index`.
  function preparedGlobal(index) {
    if (
      preparedBuilt === undefined ||
      typeof index !== 'number' ||
      index % 1 !== 0 ||
      index < 0 ||
      2 * index >= preparedBuilt.globalsNamed
    ) {
      throw new GuestTypeError('no such prepared tool: ' + S(index));
    }
    return preparedBuilt.named[2 * index + 1];
  }

  // Whether the run's catalog lists the surface `name` (GuestCatalog.surfaces).
  function hasSurface(catalog, name) {
    const surfaces = isArray(catalog && catalog.surfaces) ? catalog.surfaces : [];
    for (let i = 0; i < surfaces.length; i++)
      if (surfaces[i] !== null && typeof surfaces[i] === 'object' && surfaces[i].name === name) return true;
    return false;
  }

  // A catalog's handles and namespaces, nothing defined yet: `named` lists name, handle, … (its
  // globals, then its MCP tools), `all` is catalog.all(), `mcp` the MCP namespace.
  function buildCatalog(catalog, byIndex) {
    const globals = isArray(catalog && catalog.globals) ? catalog.globals : [];
    const named = [];
    const all = [];
    for (let i = 0; i < globals.length; i++) {
      const global = globals[i];
      let handle;
      if (byIndex === true && global !== null && typeof global === 'object' && hasOwn(global, 'prepared')) {
        handle = preparedGlobal(global.prepared);
      } else {
        const meta = readMeta(global && global.metadata);
        handle = makeHandle(meta, callInvoker(meta.callableName));
      }
      // readMeta made it a string ('' for none); a handle's own read-only property.
      named[named.length] = handle.callableName;
      named[named.length] = handle;
      put(all, i, handle);
    }
    const globalsNamed = named.length;
    const mcp = { __proto__: null };
    const servers = isArray(catalog && catalog.mcp) ? catalog.mcp : [];
    for (let i = 0; i < servers.length; i++) {
      const server = servers[i];
      if (server === null || typeof server !== 'object') continue;
      const tools = isArray(server.tools) ? server.tools : [];
      const scope = { __proto__: null };
      for (let j = 0; j < tools.length; j++) {
        const tool = tools[j];
        if (tool === null || typeof tool !== 'object') continue;
        const meta = readMeta(tool.metadata);
        const handle = makeHandle(meta, namespaceInvoker(S(server.serverName), S(meta.toolName), meta.callableName));
        named[named.length] = meta.callableName;
        named[named.length] = handle;
        defineFixed(scope, S(tool.toolIdentifier), handle, true);
      }
      defineFixed(mcp, S(server.serverIdentifier), freeze(scope), true);
    }
    return freeze({
      __proto__: null,
      named: freeze(named),
      globalsNamed,
      all: freeze(all),
      mcp: freeze(mcp),
      // Only sessions with `agents: true` have it; elsewhere `agents` stays a ReferenceError.
      agents: hasSurface(catalog, 'agents.run'),
    });
  }

  // This run's catalog: one global (a handle) per core/client tool, catalog.all(), MCP.<server>.<tool>;
  // null: the prepared one. With `prepareOnly` (the boot image, before any run): the catalog is
  // built and kept, nothing defined.
  function defineCatalog(catalogJson, prepareOnly, byIndex) {
    if (prepareOnly === true) {
      preparedBuilt = buildCatalog(JSONParse(catalogJson));
      return;
    }
    if (catalogJson === null && preparedBuilt === undefined) throw new GuestTypeError('no catalog was prepared');
    const built = catalogJson === null ? preparedBuilt : buildCatalog(JSONParse(catalogJson), byIndex);
    const named = built.named;
    for (let i = 0; i < named.length; i += 2) {
      MapSet(byName, named[i], named[i + 1]);
      if (i < built.globalsNamed && named[i] !== '' && !(named[i] in G)) defineGlobal(named[i], named[i + 1]);
    }
    allHandles = built.all;
    defineNamespaces(built.mcp);
    if (built.agents) defineGlobal('agents', surfaces.agents);
  }

  return defineCatalog;
}
