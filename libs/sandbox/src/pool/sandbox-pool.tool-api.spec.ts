import { RESTART_SAFE_NAMESPACE_MESSAGE, RESTART_SAFE_SURFACE_MESSAGE, type BridgeCall } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, toolMetadata, valueOf, waiting } from './test-support';

const STORE_KEY_MESSAGE = 'Code Mode store key must be a non-empty string of at most 256 characters.';
const STORE_VALUE_MESSAGE = 'Code Mode store value exceeds 256 KiB of serialized JSON.';

const CATALOG = testCatalog(['echo', 'fail', 'write', 'client'], {
  replaySafe: ['echo'],
  mcp: [
    {
      serverIdentifier: 'srv',
      serverName: 'my-server',
      tools: [
        {
          toolIdentifier: 'createIssue',
          metadata: toolMetadata('MCP.srv.createIssue', { toolName: 'create_issue', source: 'mcp', apiPath: 'mcp/srv.d.ts' }),
        },
      ],
    },
  ],
});

/** Canned answers per bridge method; `client` calls are answered only by the platform. */
function apiHost(calls: BridgeCall[]): BridgeHost {
  return {
    async dispatch(call) {
      calls.push(call);
      const args = call.args as Record<string, unknown>;
      switch (call.method) {
        case 'callValue':
          if (args.tool === 'fail') throw new Error('tool exploded');
          return { tool: args.tool, input: args.input };
        case 'search':
          return [toolMetadata('echo'), toolMetadata('hidden', { label: 'Hidden' })];
        case 'describe':
          return { callableName: args.tool, inputSchema: { type: 'object' } };
        case 'api':
          return args.op === 'list'
            ? { files: [{ path: 'results.d.ts', description: 'results' }] }
            : { path: args.path, content: 'x', bytes: 1 };
        case 'namespace':
          return { called: args.tool };
        case 'resultSave':
          return { id: 'r1', bytes: 9, count: 1 };
        case 'resultLoad':
          return [1, 2];
        case 'resultDelete':
          return true;
        case 'store':
          if (typeof args.key !== 'string' || args.key === '') throw new TypeError(STORE_KEY_MESSAGE);
          if (args.key === 'big') throw new RangeError(STORE_VALUE_MESSAGE);
          return null;
        case 'load':
          return args.key === 'k' ? { found: true, value: { v: 1 } } : { found: false };
        default:
          throw new Error(`unexpected ${call.method}`);
      }
    },
    answeredByPlatform: (call) => call.method === 'callValue' && (call.args as { tool?: unknown }).tool === 'client',
  };
}

// Every behaviour twice: with handles built per run, and with the catalog's handles prepared in the
// boot image (SandboxPoolOptions.preparedCatalogJson): the run's catalog is then that text, or
// (catalogJson below) another whose globals take the prepared handles where their metadata is the same.
describe.each([
  ['built per run', undefined],
  ['prepared with the boot image', CATALOG],
])('SandboxPool: guest tool API, handles %s', (_how, preparedCatalogJson) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2, preparedCatalogJson });
  });
  afterAll(async () => {
    await pool.close();
  });

  async function run(code: string, options: { restartSafe?: boolean; timeoutMs?: number; catalogJson?: string } = {}) {
    const calls: BridgeCall[] = [];
    const request = {
      ...cell(code, options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      catalogJson: options.catalogJson ?? CATALOG,
      restartSafe: options.restartSafe,
    };
    const outcome = await pool.run(request, apiHost(calls));
    return { outcome, calls, runId: request.runId };
  }

  it('installs one writable async global per catalog global that calls callValue', async () => {
    const { outcome, calls } = await run(
      'const before = [typeof echo, typeof write, typeof nope]; const a = await echo({ a: 1 }); const b = await echo(); write = 7;' +
        ' return [before, a, b, write, echo.name, echo(1) instanceof Promise]',
    );
    expect(JSON.parse(valueOf(outcome))).toEqual([
      ['function', 'function', 'undefined'],
      { tool: 'echo', input: { a: 1 } },
      { tool: 'echo', input: {} },
      7,
      'echo',
      true,
    ]);
    expect(calls.map(({ id, method, args }) => ({ id, method, args }))).toEqual([
      { id: 'bridge:callValue:1', method: 'callValue', args: { tool: 'echo', input: { a: 1 } } },
      { id: 'bridge:callValue:2', method: 'callValue', args: { tool: 'echo', input: {} } },
      { id: 'bridge:callValue:3', method: 'callValue', args: { tool: 'echo', input: 1 } },
    ]);
  });

  it('rejects a failed tool call with the tool error message', async () => {
    const { outcome } = await run('try { await fail(1) } catch (e) { return [e instanceof Error, e.message] }');
    expect(valueOf(outcome)).toBe('[true,"tool exploded"]');
  });

  it('catalog.all() is synchronous and frozen; search returns frozen callable handles', async () => {
    const { outcome, calls } = await run(
      'const all = catalog.all(); const found = await catalog.search("echo", { limit: 2 }); const hidden = found[1];' +
        ' const called = await hidden({ x: 1 });' +
        ' return { all: [Array.isArray(all), Object.isFrozen(all), all === catalog.all(), all.map((h) => h.callableName), all[0] === echo, Object.isFrozen(echo)],' +
        ' found: [Object.isFrozen(found), found[0] === echo, typeof hidden, hidden.callableName, hidden.toolName, hidden.label, hidden.source, hidden.description], called,' +
        ' frozen: Object.isFrozen(catalog) }',
    );
    expect(JSON.parse(valueOf(outcome))).toEqual({
      all: [true, true, true, ['echo', 'fail', 'write', 'client'], true, true],
      found: [true, true, 'function', 'hidden', 'hidden', 'Hidden', 'client', 'the hidden tool'],
      called: { tool: 'hidden', input: { x: 1 } },
      frozen: true,
    });
    expect(calls.map((call) => [call.method, call.args])).toEqual([
      ['search', { query: 'echo', limit: 2 }],
      ['callValue', { tool: 'hidden', input: { x: 1 } }],
    ]);
  });

  it('serializes handles in the value and in json() to their metadata; describe() asks the host', async () => {
    const { outcome, calls } = await run(
      'const [, hidden] = await catalog.search("x"); json({ h: echo }); const d = await echo.describe(); return [hidden, { h: echo, m: MCP.srv.createIssue }, d]',
    );
    const echoMeta = { callableName: 'echo', toolName: 'echo', description: 'the echo tool', source: 'client' };
    expect(JSON.parse(valueOf(outcome))).toEqual([
      { callableName: 'hidden', toolName: 'hidden', label: 'Hidden', description: 'the hidden tool', source: 'client' },
      {
        h: echoMeta,
        m: {
          callableName: 'MCP.srv.createIssue',
          toolName: 'create_issue',
          description: 'the MCP.srv.createIssue tool',
          source: 'mcp',
          apiPath: 'mcp/srv.d.ts',
        },
      },
      { callableName: 'echo', inputSchema: { type: 'object' } },
    ]);
    expect(outcome.output).toEqual([{ type: 'json', value: { h: echoMeta } }]);
    expect(calls.map((call) => [call.method, call.args])).toEqual([
      ['search', { query: 'x' }],
      ['describe', { tool: 'echo' }],
    ]);
  });

  it('builds handles without running guest getters or index setters', async () => {
    const { outcome } = await run(
      'Object.defineProperty(Object.prototype, "apiPath", { get() { throw new Error("getter ran") } });' +
        ' Object.defineProperty(Array.prototype, "0", { set(v) { throw new Error("setter ran") }, configurable: true });' +
        ' Object.prototype.toJSON = function () { return "forged" };' +
        ' const found = await catalog.search("x"); delete Array.prototype[0]; delete Object.prototype.toJSON; return [found.length, found[1].callableName, found[1]]',
    );
    expect(JSON.parse(valueOf(outcome))).toEqual([
      2,
      'hidden',
      { callableName: 'hidden', toolName: 'hidden', label: 'Hidden', description: 'the hidden tool', source: 'client' },
    ]);
  });

  it('forwards API.list/read, MCP namespace calls and results', async () => {
    const { outcome, calls } = await run(
      'const l = await API.list(); await API.list("tools/"); const r = await API.read("results.d.ts"); const m = await MCP.srv.createIssue({ a: 1 });' +
        ' await MCP.srv.createIssue(); const s = await results.save({ a: [1, undefined] }); const ld = await results.load("r1"); const del = await results.delete("r1");' +
        ' let bad; try { const o = {}; o.o = o; await results.save(o) } catch (e) { bad = [e instanceof TypeError, e.message] }' +
        ' return { l, r, m, same: namespaces.MCP === MCP, frozen: [Object.isFrozen(MCP), Object.isFrozen(MCP.srv), Object.isFrozen(namespaces)], s, ld, del, bad }',
    );
    expect(JSON.parse(valueOf(outcome))).toEqual({
      l: { files: [{ path: 'results.d.ts', description: 'results' }] },
      r: { path: 'results.d.ts', content: 'x', bytes: 1 },
      m: { called: 'create_issue' },
      same: true,
      frozen: [true, true, true],
      s: { id: 'r1', bytes: 9, count: 1 },
      ld: [1, 2],
      del: true,
      bad: [true, 'code mode value is not JSON-serializable: circular reference'],
    });
    expect(calls.map((call) => [call.id, call.args])).toEqual([
      ['bridge:api:1', { op: 'list' }],
      ['bridge:api:2', { op: 'list', prefix: 'tools/' }],
      ['bridge:api:3', { op: 'read', path: 'results.d.ts' }],
      ['bridge:namespace:1', { server: 'my-server', tool: 'create_issue', callableName: 'MCP.srv.createIssue', args: [{ a: 1 }] }],
      ['bridge:namespace:2', { server: 'my-server', tool: 'create_issue', callableName: 'MCP.srv.createIssue', args: [] }],
      ['bridge:resultSave:1', { value: { a: [1, null] } }],
      ['bridge:resultLoad:1', { id: 'r1' }],
      ['bridge:resultDelete:1', { id: 'r1' }],
    ]);
  });

  it('store/load forward; a missing key loads undefined; host TypeError/RangeError stay real instances', async () => {
    const { outcome, calls } = await run(
      'const s = await store("k", { v: 1 }); await store("gone", undefined); await store("n", null); const a = await load("k"); const b = await load("missing");' +
        ' const errors = []; for (const [key, value] of [["", 1], ["big", "x"]]) { try { await store(key, value) } catch (e) { errors.push([e instanceof TypeError, e instanceof RangeError, e.name, e.message]) } }' +
        ' return { s: s === undefined, a, b: b === undefined, errors }',
    );
    expect(JSON.parse(valueOf(outcome))).toEqual({
      s: true,
      a: { v: 1 },
      b: true,
      errors: [
        [true, false, 'TypeError', STORE_KEY_MESSAGE],
        [false, true, 'RangeError', STORE_VALUE_MESSAGE],
      ],
    });
    expect(calls.map((call) => [call.method, call.args])).toEqual([
      ['store', { key: 'k', value: { v: 1 } }],
      ['store', { key: 'gone', delete: true }],
      ['store', { key: 'n', value: null }],
      ['load', { key: 'k' }],
      ['load', { key: 'missing' }],
      ['store', { key: '', value: 1 }],
      ['store', { key: 'big', value: 'x' }],
    ]);
  });

  it('restartSafe: a tool that is not replay-safe is never dispatched and fails the cell even inside try/catch', async () => {
    const first = await run('try { await write({}) } catch (e) {} for (;;) {}', { restartSafe: true, timeoutMs: 3000 });
    expect(failure(first.outcome)).toEqual({ code: 'invalid_input', phase: 'input', error: RESTART_SAFE_SURFACE_MESSAGE });
    expect(first.outcome.bridgeDispatchStarted).toBe(false);
    expect(first.calls).toEqual([]);
    const later = await run('await echo(1); try { await write({}) } catch {} await echo(2); return "swallowed"', { restartSafe: true });
    expect(failure(later.outcome)).toEqual({ code: 'invalid_input', phase: 'bridge', error: RESTART_SAFE_SURFACE_MESSAGE });
    expect(later.outcome.bridgeDispatchStarted).toBe(true);
    expect(later.calls.map((call) => call.args)).toEqual([{ tool: 'echo', input: 1 }]);
    for (const code of [
      'await store("k", 1)',
      'await load("k")',
      'await results.save(1)',
      'const [, h] = await catalog.search("x"); await h()',
    ]) {
      expect(failure((await run(code, { restartSafe: true })).outcome).error).toBe(RESTART_SAFE_SURFACE_MESSAGE);
    }
  });

  it('restartSafe: MCP calls fail with the namespace message; replay-safe surfaces run', async () => {
    const mcp = await run('MCP.srv.createIssue({ a: 1 }).catch(() => {}); return 1', { restartSafe: true });
    expect(failure(mcp.outcome)).toEqual({ code: 'invalid_input', phase: 'input', error: RESTART_SAFE_NAMESPACE_MESSAGE });
    expect(mcp.calls).toEqual([]);
    const safe = await run(
      'const found = await catalog.search("echo"); await echo.describe(); await API.list(); await new Promise((r) => setTimeout(r, 1)); return (await found[0](3)).input',
      { restartSafe: true },
    );
    expect(valueOf(safe.outcome)).toBe('3');
    expect(safe.calls.map((call) => call.method)).toEqual(['search', 'describe', 'api', 'callValue']);
  });

  it('restartSafe: idempotent client and MCP tools are dispatched, with their call numbers (SPEC §16)', async () => {
    const catalogJson = testCatalog(['write', 'upsert'], {
      idempotent: ['upsert'],
      mcp: [
        {
          serverIdentifier: 'srv',
          serverName: 'my-server',
          tools: [
            {
              toolIdentifier: 'createIssue',
              metadata: toolMetadata('MCP.srv.createIssue', { toolName: 'create_issue', source: 'mcp', apiPath: 'mcp/srv.d.ts' }),
            },
            {
              toolIdentifier: 'putRow',
              metadata: toolMetadata('MCP.srv.putRow', { toolName: 'put_row', source: 'mcp', apiPath: 'mcp/srv.d.ts' }),
              idempotent: true,
            },
          ],
        },
      ],
    });
    const safe = await run('const a = await upsert({ id: 1 }); const b = await MCP.srv.putRow({ id: 2 }); return [a.input.id, b.called]', {
      restartSafe: true,
      catalogJson,
    });
    expect(valueOf(safe.outcome)).toBe('[1,"put_row"]');
    expect(safe.calls.map((call) => [call.method, call.callNumber])).toEqual([
      ['callValue', 1],
      ['namespace', 2],
    ]);
    // An MCP tool of the same server that is not idempotent is still refused.
    const unsafe = await run('await MCP.srv.putRow({}); await MCP.srv.createIssue({ a: 1 })', { restartSafe: true, catalogJson });
    expect(failure(unsafe.outcome)).toEqual({ code: 'invalid_input', phase: 'bridge', error: RESTART_SAFE_NAMESPACE_MESSAGE });
    expect(unsafe.calls.map((call) => call.args)).toEqual([
      { server: 'my-server', tool: 'put_row', callableName: 'MCP.srv.putRow', args: [{}] },
    ]);
  });

  it('parks at once on a platform-answered client call', async () => {
    const started = performance.now();
    const { outcome, calls, runId } = await run('return await client({ q: 1 })', { timeoutMs: 5000 });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(waiting(outcome).pending).toEqual([
      { id: 'bridge:callValue:1', method: 'callValue', args: { tool: 'client', input: { q: 1 } } },
    ]);
    // The host is told of the call (to record it) but only `settle` answers it.
    expect(calls.map((call) => call.id)).toEqual(['bridge:callValue:1']);
    pool.settle(runId, 'bridge:callValue:1', { ok: true, value: 'answered' });
    expect(valueOf(await pool.resume(runId, { timeoutMs: 1000 }))).toBe('"answered"');
  });
});
