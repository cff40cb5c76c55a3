import { StoreUnavailableError, type ApprovalLedger } from '@codemode/events';
import { ResultUnavailableError } from '@codemode/store';
import { WorkerMetrics } from '@codemode/telemetry';
import { PlatformAnsweredKind } from './kinds/platform-answered';
import type { ToolKind } from './kinds/tool-kind';
import { RunToolHost, type ToolDeps } from './run-tool-host';
import { callOf, MemoryApprovals, MemoryEventLog, RUN, sessionCatalog } from './testing/tool-call-fakes';

const never = new AbortController().signal;

/** A host over in-memory parts: a committed store of `{greeting: "hi"}`, results kept in a map. */
function hostOver(kinds: ToolKind[] = [], sessionStore = () => Promise.resolve(new Map([['greeting', '"hi"']]))) {
  const saved = new Map<string, string>();
  const stopped: string[] = [];
  const log = new MemoryEventLog();
  const deps: ToolDeps = {
    events: log,
    results: {
      save: (_ref: unknown, json: string) => {
        saved.set(`res_${saved.size + 1}`, json);
        return Promise.resolve({ id: `res_${saved.size}`, bytes: json.length, expiresAt: '2026-12-05T00:00:00.000Z' });
      },
      load: (_ref: unknown, id: unknown) => {
        const json = typeof id === 'string' ? saved.get(id) : undefined;
        return json === undefined ? Promise.reject(new ResultUnavailableError()) : Promise.resolve(json);
      },
      delete: (_ref: unknown, id: unknown) => Promise.resolve(typeof id === 'string' && saved.delete(id)),
    } as unknown as ToolDeps['results'],
    sessionStore: { snapshot: sessionStore },
    metrics: new WorkerMetrics('test'),
    stopRun: (runId) => stopped.push(runId),
    approvals: new MemoryApprovals() as unknown as ApprovalLedger,
    approvalTimeoutMs: 60_000,
    approvalRequested: () => undefined,
    readPolicy: () => Promise.resolve({ rules: [] }),
    kinds,
  };
  const host = new RunToolHost(RUN, sessionCatalog(), deps, { rules: [] });
  return { host, stopped, log };
}

/** The core tool `read`, made in this process: a call that changes nothing. */
const readKind: ToolKind = {
  answeredBy: 'worker',
  inProcess: true,
  handles: ({ entry }) => entry.source === 'openclaw' && entry.toolName === 'read',
  call: () => Promise.resolve({ text: 'hello' }),
};

describe('RunToolHost: the host surfaces', () => {
  it('searches and describes the catalog, counting each for the run telemetry', async () => {
    const { host } = hostOver();
    const found = (await host.dispatch(callOf('s', 'search', { query: 'refund' }), never)) as { callableName: string }[];
    expect(found.map((handle) => handle.callableName)).toContain('refund');
    expect(await host.dispatch(callOf('d', 'describe', { tool: 'MCP.tracker.createIssue' }), never)).toMatchObject({
      callableName: 'MCP.tracker.createIssue',
    });
    await expect(host.dispatch(callOf('d2', 'describe', { tool: 'nope' }), never)).rejects.toThrow(
      'unknown tool nope; use catalog.search(query) to find tools.',
    );
    expect(host.telemetry()).toMatchObject({ searchCount: 1, describeCount: 2, callCount: 0 });
  });

  it('lists and reads the API files, platform surfaces included', async () => {
    const { host } = hostOver();
    const listing = JSON.stringify(await host.dispatch(callOf('a', 'api', { op: 'list' }), never));
    expect(listing).toContain('skills.d.ts');
    expect(listing).toContain('agents.d.ts');
  });

  it('saves, loads and deletes results; a missing id rejects', async () => {
    const { host } = hostOver();
    const saved = (await host.dispatch(callOf('r', 'resultSave', { value: { big: [1, 2] } }), never)) as { id: string };
    await expect(host.dispatch(callOf('l', 'resultLoad', { id: saved.id }), never)).resolves.toEqual({ big: [1, 2] });
    await expect(host.dispatch(callOf('x', 'resultDelete', { id: saved.id }), never)).resolves.toBe(true);
    await expect(host.dispatch(callOf('x2', 'resultDelete', { id: saved.id }), never)).rejects.toBeInstanceOf(ResultUnavailableError);
  });

  it('buffers store writes over the committed store until the cell completes', async () => {
    const { host } = hostOver();
    await expect(host.dispatch(callOf('g', 'load', { key: 'greeting' }), never)).resolves.toEqual({ found: true, value: 'hi' });
    await host.dispatch(callOf('s1', 'store', { key: 'count', value: 2 }), never);
    await host.dispatch(callOf('s2', 'store', { key: 'greeting', delete: true }), never);
    await expect(host.dispatch(callOf('g2', 'load', { key: 'count' }), never)).resolves.toEqual({ found: true, value: 2 });
    expect([...host.storeWrites()]).toEqual([
      ['count', '2'],
      ['greeting', null],
    ]);
  });

  it('keeps its counters and buffered writes across a park (SPEC §12)', async () => {
    const { host } = hostOver();
    await host.dispatch(callOf('s', 'search', { query: 'x' }), never);
    await host.dispatch(callOf('s1', 'store', { key: 'count', value: 2 }), never);
    const image = host.parkedState();
    const { host: restored } = hostOver();
    restored.adoptParkedState(image);
    await expect(restored.dispatch(callOf('g', 'load', { key: 'count' }), never)).resolves.toEqual({ found: true, value: 2 });
    await expect(restored.dispatch(callOf('g2', 'load', { key: 'greeting' }), never)).resolves.toEqual({ found: true, value: 'hi' });
    expect(restored.telemetry()).toMatchObject({ searchCount: 1 });
  });

  it('refuses a bridge method it does not serve', async () => {
    const { host } = hostOver();
    await expect(host.dispatch(callOf('z', 'sleep', [5]), never)).rejects.toThrow('code mode bridge method sleep is not available here.');
  });

  it("stops the run on a Redis failure of a host call and fails it with the store's words", async () => {
    const { host, stopped } = hostOver([], () => Promise.reject(new StoreUnavailableError(new Error('ECONNREFUSED'))));
    await expect(host.dispatch(callOf('g', 'load', { key: 'greeting' }), never)).rejects.toThrow(
      'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    );
    expect(stopped).toEqual(['run_1']);
    expect(host.storeFailure).toBe(
      'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    );
  });

  it("stops the run when a read's events meet a Redis failure after it answered, and fails it with the store's words", async () => {
    const { host, stopped, log } = hostOver([readKind]);
    log.failWith = new StoreUnavailableError(new Error('ECONNREFUSED'));
    const read = callOf('r', 'callValue', { tool: 'read', input: { path: 'a.txt' } }, 1);
    await expect(host.dispatch(read, never)).resolves.toEqual({ text: 'hello' });
    await host.landed();
    expect(stopped).toEqual(['run_1']);
    expect(host.storeFailure).toBe(
      'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    );
    // Nothing the run writes outside its log comes after the read either.
    log.failWith = undefined;
    await expect(host.dispatch(callOf('s', 'resultSave', { value: 1 }), never)).rejects.toThrow(
      'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    );
  });

  it("stops the run when a failed call's events meet a Redis failure: the guest gets the store's words, not the call's error", async () => {
    const failing: ToolKind = { ...readKind, call: () => Promise.reject(new Error('no such file')) };
    const { host, stopped, log } = hostOver([failing]);
    log.failWith = new StoreUnavailableError(new Error('ECONNREFUSED'));
    const read = callOf('r', 'callValue', { tool: 'read', input: { path: 'missing.txt' } }, 1);
    await expect(host.dispatch(read, never)).rejects.toThrow(
      'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    );
    expect(stopped).toEqual(['run_1']);
    expect(host.storeFailure).toBe(
      'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    );
    expect(log.written).toEqual([]);
  });

  it('saves a value only once the events of the reads before it landed', async () => {
    const { host, log } = hostOver([readKind]);
    const release = log.holdWrites();
    await host.dispatch(callOf('r', 'callValue', { tool: 'read', input: { path: 'a.txt' } }, 1), never);
    let saved = false;
    const saving = host.dispatch(callOf('s', 'resultSave', { value: 1 }), never).then((answer) => {
      saved = true;
      return answer;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(saved).toBe(false);
    release();
    await expect(saving).resolves.toMatchObject({ id: 'res_1' });
    expect(log.types()).toEqual(['tool.called', 'tool.settled']);
  });

  it('hands tool calls to its pipeline: what the platform answers, and its answers', async () => {
    const { host } = hostOver([new PlatformAnsweredKind()]);
    expect(host.answeredByPlatform(callOf('c', 'callValue', { tool: 'ask_user' }))).toBe(true);
    expect(host.answeredByPlatform(callOf('c', 'search', { query: 'x' }))).toBe(false);
    expect(host.awaitsPlatform('c')).toBe(false);
    expect(host.settlePlatform('c', { ok: true, value: 1 })).toBe(false);
  });
});
