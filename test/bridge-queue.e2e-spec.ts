import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeModeResult } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const QUEUE_LIMIT_4 =
  'code mode bridge queue limit exceeded (128 ordinary requests queued; 4 in-flight slots). Await smaller batches before creating more tool calls or timers.';

/** The largest number of a run's tool calls that were called and not yet settled at once, from its events. */
function maxConcurrent(events: { type: string; runId?: string }[], runId: string): number {
  let open = 0;
  let max = 0;
  for (const event of events) {
    if (event.runId !== runId) continue;
    if (event.type === 'tool.called') max = Math.max(max, (open += 1));
    if (event.type === 'tool.settled') open -= 1;
  }
  return max;
}

// One stack for the whole file: both parts use the default tenant on separate sessions.
let stack: TestStack;
let client: CodeModeClient;
beforeAll(async () => {
  stack = await TestStack.start();
  client = stack.client();
});
afterAll(async () => {
  await stack?.stop();
});

describe('the bridge queue beyond maxPendingToolCalls (SPEC §3)', () => {
  it('completes Promise.all over 100 core tool calls with 4 in-flight slots, in one exec', async () => {
    const sid = 'bq-100';
    await client.putSession(sid, { codeMode: { maxPendingToolCalls: 4 } });
    const workspace = join(stack.workspaceRoot, 'default', sid);
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'a.txt'), 'a');
    const code =
      'const items = Array.from({ length: 100 }, (_, i) => i); const r = await Promise.all(items.map(() => ls({}))); return r.filter((x) => x.entries.length > 0).length;';
    const result = await client.exec(sid, { title: '100 calls', code });
    expect(result).toMatchObject({ status: 'completed', value: 100 });
    expect(result.telemetry.callCount).toBe(100);
    const events = (await client.events(sid, { limit: 1000 })).events;
    const runId = events.find((e) => e.type === 'run.started')?.runId ?? '';
    expect(events.filter((e) => e.runId === runId && e.type === 'tool.called')).toHaveLength(100);
    expect(maxConcurrent(events, runId)).toBeLessThanOrEqual(4);
  });

  it('fails past 128 queued requests with the exact message', async () => {
    const sid = 'bq-200';
    await client.putSession(sid, { codeMode: { maxPendingToolCalls: 4 } });
    const code = 'await Promise.all(Array.from({ length: 200 }, () => ls({}))); return "never";';
    const result = await client.exec(sid, { title: '200 calls', code });
    expect(result).toMatchObject({ status: 'failed', code: 'invalid_input', failurePhase: 'guest', error: QUEUE_LIMIT_4 });
    const timers = await client.exec(sid, {
      title: '200 timers',
      code: 'for (let i = 0; i < 200; i++) setTimeout(() => {}, 1); return 1;',
    });
    expect(timers).toMatchObject({ status: 'failed', code: 'invalid_input', error: QUEUE_LIMIT_4 });
  });

  it('lists queued platform calls in pendingToolCalls and starts them as the platform answers', async () => {
    const sid = 'bq-client';
    await client.putSession(sid, { codeMode: { maxPendingToolCalls: 2 } });
    await client.raw('PUT', `/v1/sessions/${sid}/tools`, {
      body: JSON.stringify({ tools: [{ name: 'ask_human', description: 'Ask the operator' }] }),
    });
    const code = 'const r = await Promise.all([1, 2, 3, 4, 5].map((n) => ask_human({ n }))); return r;';
    let result: CodeModeResult = await client.exec(sid, { title: 'platform calls', code });
    const first = result as Extract<CodeModeResult, { status: 'waiting' }>;
    expect(first).toMatchObject({ status: 'waiting', reason: 'pending_tools' });
    expect(first.pendingToolCalls?.map((call) => [call.id, call.tool, call.input])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [`bridge:callValue:${n}`, 'ask_human', { n }]),
    );
    for (let round = 0; round < 5 && result.status === 'waiting'; round += 1) {
      // The oldest unsettled calls hold the two slots; the others wait unsent behind them.
      const inFlight = (result.pendingToolCalls ?? []).slice(0, 2);
      await client.toolResults(
        sid,
        first.runId,
        inFlight.map((call) => ({ id: call.id, ok: true, value: (call.input as { n: number }).n * 10 })),
      );
      result = await client.wait(sid, first.runId);
    }
    expect(result).toMatchObject({ status: 'completed', value: [10, 20, 30, 40, 50] });
  });
});

describe('store keys and console rendering through the worker (SPEC §4)', () => {
  it('refuses a key object with toJSON; an uncaught store error fails in phase bridge', async () => {
    const caught = await client.exec('keys', {
      title: 'caught',
      code: 'try { await store({ toJSON() { return "k"; } }, 1); } catch (e) { return e.name + ": " + e.message; }',
    });
    expect(caught).toMatchObject({
      status: 'completed',
      value: 'TypeError: Code Mode store key must be a non-empty string of at most 256 characters.',
    });
    const uncaught = await client.exec('keys', { title: 'uncaught', code: 'await store(5, 1); return 1;' });
    expect(uncaught).toMatchObject({ status: 'failed', code: 'internal_error', failurePhase: 'bridge', bridgeDispatchStarted: true });
    expect((uncaught as { error: string }).error.split('\n')[0]).toBe(
      'TypeError: Code Mode store key must be a non-empty string of at most 256 characters.',
    );
    expect((await client.raw('GET', '/v1/sessions/keys/store')).body).toEqual({ values: {} });
  });

  it('prints a cycle as "[Circular]" and tells the model to await a logged promise', async () => {
    const result = await client.exec('console', {
      title: 'console',
      code: 'const o = {}; o.self = o; console.log(o); console.log(Promise.resolve(1)); return 1;',
    });
    expect(result).toMatchObject({
      status: 'completed',
      output: [
        { type: 'text', text: '{"self":"[Circular]"}' },
        { type: 'text', text: '[Unawaited Promise: use await or Promise.all(...) before emitting or returning values.]' },
      ],
    });
  });

  it('shows the budget and the shell guidance in the exec description', async () => {
    const res = await client.raw('GET', '/v1/sessions/desc/tools');
    const view = res.body as { execDescription: string };
    expect(view.execDescription).toContain('Each exec or wait call has a 10000 ms wall-clock budget.');
    expect(view.execDescription).toContain('Use the shell tool exec for heavier computation.');
    await client.putSession('desc', { codeMode: { timeoutMs: 2500 } });
    const own = (await client.raw('GET', '/v1/sessions/desc/tools')).body as { execDescription: string };
    expect(own.execDescription).toContain('Each exec or wait call has a 2500 ms wall-clock budget.');
  });
});
