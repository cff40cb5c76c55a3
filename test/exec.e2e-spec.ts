import { CodeModeResultSchema, type CodeModeResult } from '@codemode/contracts';
import { stackRedis, TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

describe('exec over REST (real api + worker)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const exec = async (sid: string, body: unknown, headers: Record<string, string> = {}): Promise<CodeModeResult> => {
    const res = await stack.client().raw('POST', `/v1/sessions/${sid}/exec`, {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
    });
    expect(res.status).toBe(200);
    return CodeModeResultSchema.parse(res.body);
  };

  it('answers the README example with a completed result', async () => {
    const result = await exec('s1', { title: 'add', code: 'return 1+1' });
    expect(result).toMatchObject({ status: 'completed', value: 2, replaySafe: false });
    expect(result.telemetry.visibleTools).toEqual(['exec', 'wait']);
  });

  it('runs the body as sloppy async code with output in order', async () => {
    const result = await exec('s-out', {
      title: 'output',
      command:
        'x = 5; console.log("a", 1); text("b"); json({c: 2}); console.warn("w"); await new Promise(r => setTimeout(r, 20)); return this === globalThis && x;',
    });
    expect(result.status).toBe('completed');
    if (result.status !== 'completed') return;
    expect(result.value).toBe(5);
    expect(result.output).toEqual([
      { type: 'text', text: 'a 1' },
      { type: 'text', text: 'b' },
      { type: 'json', value: { c: 2 } },
      { type: 'text', text: '[warn] w' },
    ]);
  });

  it('gives null for a trailing expression without return and keeps no variables across cells', async () => {
    expect(await exec('s-null', { title: 't', code: 'var kept = 1; kept + 1' })).toMatchObject({ status: 'completed', value: null });
    expect(await exec('s-null', { title: 't', code: 'return typeof kept' })).toMatchObject({ status: 'completed', value: 'undefined' });
  });

  it('records run.requested, run.started and the terminal event, and the transcript', async () => {
    const sid = 's-events';
    await exec(sid, { title: 'ok', code: 'return "fine"' });
    await exec(sid, { title: 'boom', code: 'throw new TypeError("bad")' });
    const page = await stack.client().events(sid);
    const types = page.events.map((e) => e.type);
    expect(types).toEqual(['run.requested', 'run.started', 'run.completed', 'run.requested', 'run.started', 'run.failed']);
    const runIds = [...new Set(page.events.map((e) => e.runId))];
    expect(runIds).toHaveLength(2);
    expect(runIds[0]).toMatch(/^cm_[0-9a-f-]{36}$/);
    const failed = page.events[5].data.result as CodeModeResult;
    expect(failed).toMatchObject({ status: 'failed', code: 'internal_error', failurePhase: 'guest' });
    expect(failed.status === 'failed' && failed.error).toMatch(/^TypeError: bad/);

    const transcript = await stack.client().transcript(sid);
    expect(transcript.map((e) => [e.kind, e.call, e.runId])).toEqual([
      ['input', 'exec', runIds[0]],
      ['result', 'exec', runIds[0]],
      ['input', 'exec', runIds[1]],
      ['result', 'exec', runIds[1]],
    ]);
    expect(transcript[0]).toMatchObject({ input: { title: 'ok', code: 'return "fine"' } });
    expect(transcript[1]).toMatchObject({ result: { status: 'completed', value: 'fine' } });

    const run = await stack.client().getRun(sid, runIds[0]!);
    expect(run).toMatchObject({ status: 'completed', title: 'ok', lastResult: { status: 'completed', value: 'fine' } });
    expect(run.owner).toEqual(expect.any(String));
  });

  it.each([
    [{ title: 'x' }, 'code or command must be a non-empty string.'],
    [{ title: 'x', code: '   ' }, 'code or command must be a non-empty string.'],
    [{ title: 'x', code: 'return 1', command: 'return 2' }, 'code and command must match when both are provided.'],
    [
      { title: 'x', code: 'return 1', language: 'typescript' },
      'Code Mode accepts JavaScript only. Remove language and typecheck; use API.read(...) for tool types.',
    ],
    [{ title: 'x', code: 'return 1', restartSafe: 'yes' }, 'restartSafe must be a boolean.'],
    [{ title: 'x', code: 'const fs = require("fs"); return 1' }, 'code mode module access is disabled.'],
    [{ title: 'x', code: 'return import("fs")' }, 'code mode module access is disabled.'],
    [
      { title: 'x', code: 'ls -la /workspace/' },
      'code-mode exec runs JavaScript or TypeScript, not shell commands. Call an enabled async tool global from guest JavaScript; use catalog.search(query) when the bounded quick index omits it. Do not retry the same shell command as code.',
    ],
    [{ title: 'x', code: 'x'.repeat(1024 * 1024 + 1) }, 'code exceeds 1 MiB.'],
  ])('refuses bad input %#, running nothing', async (body, error) => {
    const sid = `s-bad-${Math.random().toString(36).slice(2)}`;
    const result = await exec(sid, body);
    expect(result).toMatchObject({ status: 'failed', code: 'invalid_input', failurePhase: 'input', error, bridgeDispatchStarted: false });
    const page = await stack.client().events(sid);
    expect(page.events.map((e) => e.type)).toEqual(['exec.rejected']);
  });

  it("starts a session's parallel execs at once: every cell starts before the first one ends", async () => {
    // A session's cells all go to one queue shard: a burst there must start every cell at once
    // (up to the worker's concurrency), not one at a time as cells end.
    const sid = 's-burst';
    const cells = 12;
    const results = await Promise.all(
      Array.from({ length: cells }, (_, i) =>
        exec(sid, { title: `burst ${i}`, code: `await new Promise((r) => setTimeout(r, 3000)); return ${i};` }),
      ),
    );
    expect(results.map((r) => (r.status === 'completed' ? r.value : r.status))).toEqual(Array.from({ length: cells }, (_, i) => i));
    const { events } = await stack.client().events(sid, { limit: 1000 });
    const times = (type: string) => events.filter((e) => e.type === type).map((e) => Date.parse(e.at));
    const started = times('run.started');
    expect(started).toHaveLength(cells);
    expect(Math.max(...started)).toBeLessThan(Math.min(...times('run.completed')));
  });

  it('names line and column of a syntax error', async () => {
    const result = await exec('s-syntax', { title: 'x', code: 'const a = 1;\nreturn a +* 2;' });
    expect(result).toMatchObject({ status: 'failed', code: 'invalid_input', failurePhase: 'input' });
    expect(result.status === 'failed' && result.error).toMatch(/^SyntaxError: .*2.*\b\d+\b/);
  });

  it('answers bodies that are not JSON objects, or too large, with failed results', async () => {
    for (const body of ['not json', '[1,2]', '"str"', 'null', '']) {
      expect(await exec('s-body', body)).toMatchObject({ status: 'failed', code: 'invalid_input', failurePhase: 'input' });
    }
    const huge = JSON.stringify({ title: 'x', code: 'return 1', pad: 'y'.repeat(16 * 1024 * 1024) });
    expect(await exec('s-body', huge)).toMatchObject({ status: 'failed', code: 'invalid_input', error: 'request body exceeds 16 MiB.' });
    expect(await exec('s-body', { title: 'x', code: 'return 3' })).toMatchObject({ status: 'completed', value: 3 });
  });

  it('stops hostile cells and keeps serving', async () => {
    const sid = 's-hostile';
    await stack.client().putSession(sid, { codeMode: { timeoutMs: 100 } });
    let started = Date.now();
    expect(await exec(sid, { title: 'spin', code: 'while(true){}' })).toMatchObject({
      status: 'failed',
      code: 'timeout',
      error: 'code mode timeout exceeded',
    });
    expect(Date.now() - started).toBeLessThan(1000);

    await stack.client().putSession(sid, { codeMode: { timeoutMs: 500 } });
    started = Date.now();
    expect(await exec(sid, { title: 'join', code: 'return new Array(1e8).join(",").length' })).toMatchObject({
      status: 'failed',
      code: 'timeout',
    });
    expect(Date.now() - started).toBeLessThan(3000);

    await stack.client().putSession(sid, { codeMode: { timeoutMs: 10000, memoryLimitBytes: 16 * 1024 * 1024 } });
    const bomb = await exec(sid, { title: 'bomb', code: 'const a = []; for (;;) a.push("x".repeat(1e5) + a.length);' });
    expect(bomb).toMatchObject({ status: 'failed' });
    expect(bomb.status === 'failed' && bomb.error).toMatch(/out of memory|memory/i);

    expect(await exec(sid, { title: 'after', code: 'return [1,2,3].map(x => x * 2)' })).toMatchObject({
      status: 'completed',
      value: [2, 4, 6],
    });
  });

  it('returns the first answer for a repeated Idempotency-Key', async () => {
    const body = { title: 'once', code: 'return Math.random()' };
    const [a, b] = await Promise.all([
      exec('s-idem', body, { 'idempotency-key': 'k-1' }),
      exec('s-idem', body, { 'idempotency-key': 'k-1' }),
    ]);
    expect(a.status).toBe('completed');
    expect(b).toEqual(a);
    const c = await exec('s-idem', body, { 'idempotency-key': 'k-1' });
    expect(c).toEqual(a);
    const page = await stack.client().events('s-idem');
    expect(page.events.filter((e) => e.type === 'run.requested')).toHaveLength(1);
    const parked = await exec('s-idem', { title: 'park', code: 'await yield_control(); return 1' }, { 'idempotency-key': 'k-park' });
    expect(parked.status).toBe('waiting');
    const started = Date.now();
    expect(await exec('s-idem', { title: 'park', code: 'await yield_control(); return 1' }, { 'idempotency-key': 'k-park' })).toEqual(
      parked,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("returns the first wait's answer for a repeated wait Idempotency-Key; keys are per route", async () => {
    const wait = async (sid: string, runId: string, key?: string): Promise<CodeModeResult> => {
      const res = await stack.client().raw('POST', `/v1/sessions/${sid}/wait`, {
        body: JSON.stringify({ runId }),
        headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      });
      expect(res.status).toBe(200);
      return CodeModeResultSchema.parse(res.body);
    };
    // Each leg parks with a random number and returns the leg count at the end.
    const code = 'let legs = 0; for (;;) { legs++; const r = Math.random(); if (legs === 4) return legs; await yield_control(String(r)); }';
    const parked = await exec('s-wait-idem', { title: 'legs', code }, { 'idempotency-key': 'same' });
    expect(parked.status).toBe('waiting');
    if (parked.status !== 'waiting') return;
    const runId = parked.runId;
    // Two at once with one key: one resumes the run, the other gets its answer (not "already being resumed").
    const [a, b] = await Promise.all([wait('s-wait-idem', runId, 'w-1'), wait('s-wait-idem', runId, 'w-1')]);
    expect(a).toMatchObject({ status: 'waiting', runId });
    expect(b).toEqual(a);
    // The exec's key is not a wait's: 'same' on wait is a new key and resumes the run.
    const second = await wait('s-wait-idem', runId, 'same');
    expect(second).toMatchObject({ status: 'waiting', runId });
    expect(second).not.toEqual(a);
    // Later legs moved the run on: each key still answers its own leg's answer.
    const last = await wait('s-wait-idem', runId);
    expect(last).toMatchObject({ status: 'completed', value: 4 });
    expect(await wait('s-wait-idem', runId, 'w-1')).toEqual(a);
    expect(await wait('s-wait-idem', runId, 'same')).toEqual(second);
    // A new key on the ended run answers as any wait on it does, naming where the outcome is read.
    expect(await wait('s-wait-idem', runId, 'w-new')).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      error: `code mode run is unavailable or expired. Read its outcome with GET /v1/sessions/s-wait-idem/runs/${runId}.`,
    });
    const resumed = (await stack.client().events('s-wait-idem', { limit: 1000 })).events.filter((e) => e.type === 'run.resumed');
    expect(resumed).toHaveLength(3);
    expect(await wait('s-wait-idem', runId, 'bad key')).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      error: 'Idempotency-Key must be 1-256 printable ASCII characters.',
    });
  });

  it('clamps session limits and merges PUTs', async () => {
    const client = stack.client();
    const first = await client.putSession('s-limits', { agentId: 'a1', codeMode: { timeoutMs: 5, maxOutputBytes: 10 ** 9 } });
    expect(first.codeMode).toMatchObject({ timeoutMs: 100, maxOutputBytes: 10485760, memoryLimitBytes: 67108864 });
    expect(first.agentId).toBe('a1');
    // A clamp is said (issue 43): each setting asked for that the session does not get as asked.
    expect(first.clamped).toEqual([
      { setting: 'codeMode.timeoutMs', requested: 5, applied: 100 },
      { setting: 'codeMode.maxOutputBytes', requested: 10 ** 9, applied: 10485760 },
    ]);
    const second = await client.putSession('s-limits', { codeMode: { snapshotTtlSeconds: 2 } });
    expect(second).toMatchObject({ agentId: 'a1', codeMode: { timeoutMs: 100, snapshotTtlSeconds: 2 } });
    expect(second).not.toHaveProperty('clamped');
    const third = await client.putSession('s-limits', { codeMode: { timeoutMs: 'soon' }, shell: { cleanupMs: 1 } });
    expect(third.codeMode.timeoutMs).toBe(10000);
    expect(third.clamped).toEqual([
      { setting: 'codeMode.timeoutMs', requested: 'soon', applied: 10000 },
      { setting: 'shell.cleanupMs', requested: 1, applied: 60000 },
    ]);
    const view = await client.getSession('s-limits');
    expect(view).toMatchObject({ sessionId: 's-limits', agentId: 'a1', codeMode: { snapshotTtlSeconds: 2 } });
    expect(view.createdAt).toEqual(expect.any(String));
  });

  it('removes the session policy on policy: null, so its cells run under the tenant policy alone', async () => {
    const client = stack.client();
    const sid = 's-policy-null';
    await client.putTools(sid, [{ name: 'ask', description: 'answered by the platform' }]);
    const denied = await client.putSession(sid, { policy: { rules: [{ tool: 'ask', decision: 'deny' }] } });
    expect(denied.policy).toEqual({ rules: [{ tool: 'ask', decision: 'deny' }] });
    const cell = { title: 'ask', code: 'try { return await ask({}); } catch (e) { return e.message; }' };
    expect(await exec(sid, cell)).toMatchObject({ status: 'completed', value: 'code mode tool ask is blocked by policy.' });
    const cleared = await client.putSession(sid, { policy: null });
    expect(cleared.policy).toBeNull();
    expect((await client.getSession(sid)).policy).toBeNull();
    // Allowed now (the tenant has no policy): the call waits for the platform's answer.
    const asked = await exec(sid, cell);
    expect(asked).toMatchObject({ status: 'waiting', pendingToolCalls: [{ id: 'bridge:callValue:1', tool: 'ask' }] });
    if (asked.status === 'waiting') await client.abort(sid, asked.runId);
  });

  it('runs an exec with the limits of a session configured since its last exec', async () => {
    // The API keeps each session's settings between execs; request-run refuses them once the session
    // was configured since (here by the same API; another API process is the same case).
    const sid = 's-reconfigured';
    await stack.client().putSession(sid, { codeMode: { timeoutMs: 5000 } });
    expect(await exec(sid, { title: 'warm', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });
    await stack.client().putSession(sid, { codeMode: { timeoutMs: 100 } });
    const started = Date.now();
    expect(await exec(sid, { title: 'spin', code: 'while(true){}' })).toMatchObject({ status: 'failed', code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
    const requested = (await stack.client().events(sid)).events.filter((e) => e.type === 'run.requested');
    expect(requested.map((e) => (e.data as { limits: { timeoutMs: number } }).limits.timeoutMs)).toEqual([5000, 100]);
  });

  it('fails a cell whose session tools cannot be read at once, with its one terminal event', async () => {
    // The worker claims a run while it reads the run's tools: a claimed run whose tools cannot be
    // read is failed by the worker, not left running.
    const sid = 's-unreadable-tools';
    expect(await exec(sid, { title: 'warm', code: 'return 1' })).toMatchObject({ status: 'completed', value: 1 });
    const redis = stackRedis();
    try {
      await redis.set(`${stack.prefix}:{default:${sid}}:tools`, '{not json');
      const started = Date.now();
      const result = await exec(sid, { title: 'unprepared', code: 'return 2' });
      expect(result).toMatchObject({
        status: 'failed',
        code: 'internal_error',
        error: "code mode could not read the session's tools or policy to run the cell; the failure was logged. Retry the exec.",
      });
      expect(Date.now() - started).toBeLessThan(5000);
      const events = (await stack.client().events(sid)).events;
      const runId = events.find((e) => e.type === 'run.requested' && (e.data as { title?: string }).title === 'unprepared')?.runId;
      expect(events.filter((e) => e.runId === runId).map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.failed']);
    } finally {
      redis.disconnect();
    }
  });

  it('answers 404 for reads of sessions and runs that were never created, 400 for bad fields', async () => {
    const client = stack.client();
    for (const path of [
      '/v1/sessions/nope',
      '/v1/sessions/nope/events',
      '/v1/sessions/nope/transcript',
      '/v1/sessions/s1/runs/cm_00000000-0000-0000-0000-000000000000',
    ]) {
      const res = await client.raw('GET', path);
      expect([path, res.status, (res.body as { code: string }).code]).toEqual([path, 404, 'not_found']);
    }
    expect((await client.raw('GET', '/v1/sessions/s1/events?limit=0')).status).toBe(400);
    expect((await client.raw('GET', '/v1/sessions/s1/events?limit=-3')).body).toMatchObject({
      code: 'invalid_input',
      error: 'limit must be an integer from 1 to 1000.',
    });
    expect((await client.raw('GET', '/v1/sessions/s1/events?after=bogus')).status).toBe(400);
    expect((await client.raw('GET', '/v1/sessions/s1/events?after=99999999999999999999-0')).status).toBe(400);
    expect((await client.raw('GET', '/v1/sessions/s1/events?after=18446744073709551615-18446744073709551615')).status).toBe(400);
    expect((await client.raw('GET', '/v1/sessions/s1/events?limit=5000')).status).toBe(200);
    expect((await client.raw('PUT', '/v1/sessions/s1', { body: '[1]' })).body).toMatchObject({ code: 'invalid_input' });
    expect((await client.raw('PUT', '/v1/sessions/s1', { body: '{"agentId": 5}' })).body).toMatchObject({
      code: 'invalid_input',
      details: { field: 'agentId' },
    });
    expect((await client.raw('GET', `/v1/sessions/${'x'.repeat(129)}`)).status).toBe(400);
  });

  it('pages events with after/limit/next', async () => {
    const sid = 's-page';
    for (let i = 0; i < 3; i += 1) await exec(sid, { title: 't', code: `return ${i}` });
    const client = stack.client();
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await client.events(sid, { after, limit: 4 });
      seen.push(...page.events.map((e) => e.id));
      if (page.next === null) break;
      expect(page.events).toHaveLength(4);
      after = page.next;
    }
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
  });

  it('streams live events as text/event-stream', async () => {
    const sid = 's-sse';
    await exec(sid, { title: 't', code: 'return 1' });
    const controller = new AbortController();
    const res = await fetch(`${stack.baseUrl}/v1/sessions/${sid}/events`, {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const readUntil = async (pattern: RegExp): Promise<void> => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        text += Buffer.from(value).toString();
      }
    };
    await readUntil(/event: run\.completed/);
    await exec(sid, { title: 'live', code: 'return 2' });
    await readUntil(/event: run\.completed[\s\S]*event: run\.completed/);
    controller.abort();
    expect(text.match(/^event: /gm)).toHaveLength(6);
  });
});
