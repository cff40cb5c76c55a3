import { createServer, type Server } from 'node:http';
import type { CodeModeResult, Event } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { allEvents, sleep } from '../chaos/chaos-helpers';
import { stackRedis, TestStack } from '../utils/test-stack';

jest.setTimeout(120_000);

const TERMINAL = /^run\.(completed|failed|expired|lost)$/;
const UNAVAILABLE = 'code mode run is unavailable or expired.';
const LOST_PENDING_CALL = 'code mode run lost a pending tool call when its worker stopped; start a new run.';

/** A webhook whose first call of each key never answers (its worker dies first); later calls answer at once. */
function startHook(): Promise<{ server: Server; url: string; calls: Map<string, number> }> {
  const calls = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { input } = JSON.parse(body) as { input: { key: string } };
      const seen = (calls.get(input.key) ?? 0) + 1;
      calls.set(input.key, seen);
      if (seen === 1) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key: input.key, seen }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, calls });
    }),
  );
}

function runIdOf(result: CodeModeResult): string {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result.runId;
}

/** Waits on the run until it is no longer waiting (a wait routed to a dead owner answers waiting again). */
async function finish(client: CodeModeClient, sid: string, runId: string): Promise<CodeModeResult> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const result = await client.wait(sid, runId);
    if (result.status !== 'waiting') return result;
  }
  throw new Error(`run ${runId} still waiting`);
}

function terminals(events: Event[], runId: string): string[] {
  return events.filter((e) => e.runId === runId && TERMINAL.test(e.type)).map((e) => e.type);
}

/**
 * SPEC §12: every parked run survives the death of the worker that parked it. One worker parks
 * runs of every kind, is killed with -9, and another worker finishes each from its image.
 */
describe('durable parked runs: kill -9 of the worker holding them', () => {
  let stack: TestStack;
  let hook: Awaited<ReturnType<typeof startHook>>;
  let redis: ReturnType<typeof stackRedis>;
  beforeAll(async () => {
    hook = await startHook();
    redis = stackRedis();
    stack = await TestStack.start({ workers: 1, env: { CODEMODE_LEASE_MS: '2000', CODEMODE_REPLY_GRACE_MS: '1000' } });
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.server.close();
    redis?.disconnect();
  });

  it('finishes closure state, store + timer, a platform answer given after the kill and webhooks on another worker', async () => {
    const client = stack.client();
    const sid = 'durable';
    await client.putSession(sid, { codeMode: { timeoutMs: 1000 } });
    await client.putTools(sid, [
      { name: 'ask', description: 'answered by the platform' },
      { name: 'lookup', description: 'replay-safe webhook', endpoint: `${hook.url}/lookup`, replaySafe: true },
      { name: 'charge', description: 'webhook that must not run twice', endpoint: `${hook.url}/charge` },
    ]);
    const closure = runIdOf(
      await client.exec(sid, {
        title: 'closure',
        code: 'let n = 40; const bump = () => (n += 1); const rows = Array.from({ length: 2000 }, (_, i) => ({ i })); await yield_control(); bump(); bump(); return { n, rows: rows.length };',
      }),
    );
    const storeTimer = runIdOf(
      await client.exec(sid, {
        title: 'store+timer',
        code: 'store("k", { v: 1 }); const t0 = Date.now(); await new Promise((r) => setTimeout(r, 4000)); return { k: await load("k"), waited: Date.now() - t0 >= 3900 };',
      }),
    );
    const asked = await client.exec(sid, { title: 'ask', code: 'const a = await ask({ q: 1 }); return a.answer * 2;' });
    expect(asked).toMatchObject({
      status: 'waiting',
      reason: 'pending_tools',
      pendingToolCalls: [{ id: 'bridge:callValue:1', tool: 'ask' }],
    });
    const webhookSafe = runIdOf(await client.exec(sid, { title: 'lookup', code: 'const r = await lookup({ key: "safe" }); return r;' }));
    const webhookUnsafe = runIdOf(
      await client.exec(sid, { title: 'charge', code: 'const r = await charge({ key: "unsafe" }); return r;' }),
    );
    expect(hook.calls.get('safe')).toBe(1);

    const [victim] = stack.workers;
    await stack.addWorker();
    await victim.kill();

    // SPEC §2/§12: accepted once recorded in the log, though the owner is dead (its lease not lapsed yet).
    const accepted = await client.raw('POST', `/v1/sessions/${sid}/runs/${runIdOf(asked)}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value: { answer: 21 } }] }),
    });
    expect(accepted.status).toBe(202);
    await sleep(2500);

    expect(await finish(client, sid, closure)).toMatchObject({ status: 'completed', value: { n: 42, rows: 2000 } });
    expect(await finish(client, sid, storeTimer)).toMatchObject({ status: 'completed', value: { k: { v: 1 }, waited: true } });
    expect(await finish(client, sid, runIdOf(asked))).toMatchObject({ status: 'completed', value: 42 });
    expect(await finish(client, sid, webhookSafe)).toMatchObject({ status: 'completed', value: { key: 'safe', seen: 2 } });
    expect(await finish(client, sid, webhookUnsafe)).toMatchObject({
      status: 'failed',
      code: 'runtime_unavailable',
      error: LOST_PENDING_CALL,
    });
    expect(hook.calls.get('unsafe')).toBe(1);
    expect((await client.raw('GET', `/v1/sessions/${sid}/store`)).body).toEqual({ values: { k: { v: 1 } } });

    const events = await allEvents(client, sid);
    for (const runId of [closure, storeTimer, runIdOf(asked), webhookSafe]) expect(terminals(events, runId)).toEqual(['run.completed']);
    expect(terminals(events, webhookUnsafe)).toEqual(['run.failed']);
    expect(events.filter((e) => e.type === 'run.lost')).toEqual([]);
    expect(events.filter((e) => e.type === 'run.recovered')).toHaveLength(5);
  });

  it('refuses an image of another wasm binary: unavailable and run.lost, or replay for a replay-safe run', async () => {
    const client = stack.client();
    const sid = 'refused';
    const plain = runIdOf(await client.exec(sid, { title: 'plain', code: 'let n = 1; await yield_control(); return n;' }));
    const safe = runIdOf(await client.exec(sid, { title: 'safe', code: 'let n = 2; await yield_control(); return n;', restartSafe: true }));
    for (const runId of [plain, safe]) {
      const key = `${stack.prefix}:{default:${sid}}:image:${runId}`;
      expect(await redis.hexists(key, 'image')).toBe(1);
      await redis.hset(key, 'wasmHash', '0'.repeat(64));
    }
    const owner = stack.workers.find((w) => w.alive)!;
    await stack.addWorker();
    await owner.kill();
    await sleep(2500);
    expect(await finish(client, sid, plain)).toMatchObject({ status: 'failed', code: 'invalid_input', error: UNAVAILABLE });
    expect(await finish(client, sid, safe)).toMatchObject({ status: 'completed', value: 2, replaySafe: true });
    const events = await allEvents(client, sid);
    expect(terminals(events, plain)).toEqual(['run.lost']);
    expect(terminals(events, safe)).toEqual(['run.completed']);
  });
});

/** SPEC §12: SIGTERM hands every parked run over; none is lost. */
describe('durable parked runs: SIGTERM hand-over', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('releases parked runs at shutdown and another worker finishes them at once', async () => {
    const client = stack.client();
    const sid = 'handover';
    const runIds = await Promise.all(
      Array.from({ length: 5 }, async (_, i) =>
        runIdOf(await client.exec(sid, { title: `h${i}`, code: `const base = ${i}; await yield_control(); return base * 10;` })),
      ),
    );
    const [first] = stack.workers;
    await stack.addWorker();
    expect(await first.stop()).toBe(0);
    const started = Date.now();
    const results = await Promise.all(runIds.map((runId) => client.wait(sid, runId)));
    expect(results.map((r) => (r.status === 'completed' ? r.value : r))).toEqual([0, 10, 20, 30, 40]);
    expect(Date.now() - started).toBeLessThan(5000);
    const events = await allEvents(client, sid);
    expect(events.filter((e) => e.type === 'run.lost')).toEqual([]);
    expect(events.filter((e) => e.type === 'run.released')).toHaveLength(5);
    for (const runId of runIds) expect(terminals(events, runId)).toEqual(['run.completed']);
  });

  it('aborts a released run from the API, removing its image at once', async () => {
    const client = stack.client();
    const sid = 'released-abort';
    const runId = runIdOf(await client.exec(sid, { title: 'released', code: 'await yield_control(); return 1;' }));
    const [holder] = stack.workers.filter((w) => w.alive);
    await stack.addWorker();
    expect(await holder.stop()).toBe(0);
    const key = `${stack.prefix}:{default:${sid}}:image:${runId}`;
    const redis = stackRedis();
    try {
      expect(await redis.exists(key)).toBe(1);
      expect(await client.abort(sid, runId)).toMatchObject({ status: 'failed', code: 'aborted' });
      for (let i = 0; i < 50 && (await redis.exists(key)) === 1; i += 1) await sleep(50);
      expect(await redis.exists(key)).toBe(0);
    } finally {
      redis.disconnect();
    }
    expect(terminals(await allEvents(client, sid), runId)).toEqual(['run.failed']);
  });
});
