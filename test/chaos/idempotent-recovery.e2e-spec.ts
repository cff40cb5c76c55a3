import { createServer, type Server } from 'node:http';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';

jest.setTimeout(90_000);

/**
 * A webhook tool that applies each Idempotency-Key once (a later request with a key it applied
 * answers the same row) and holds its first request open, so the worker can die with it in flight.
 * `retryDelay.ms` holds the second request that long before answering (a slow retry).
 */
function startApplier(): Promise<{
  server: Server;
  url: string;
  keys: string[];
  rows: Map<string, number>;
  first: Promise<void>;
  retryDelay: { ms: number };
}> {
  const retryDelay = { ms: 0 };
  const keys: string[] = [];
  const rows = new Map<string, number>();
  let arrived: () => void = () => undefined;
  const first = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = String(req.headers['idempotency-key']);
      keys.push(key);
      if (keys.length === 1) return arrived();
      const answer = () => {
        if (!rows.has(key)) rows.set(key, rows.size + 1);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ row: rows.get(key) }));
      };
      if (keys.length === 2 && retryDelay.ms > 0) setTimeout(answer, retryDelay.ms);
      else answer();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        server,
        url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
        keys,
        rows,
        first,
        retryDelay,
      });
    }),
  );
}

/*
 * SPEC §16 on a first leg: a restartSafe cell writing through an idempotent tool survives kill -9 of
 * its worker mid-call. Its re-delivered cell job is rebuilt by replay on the other worker, which
 * sends the in-flight call again with the same callKey; every effect happens once.
 */
describe('chaos: kill -9 while a cell has an idempotent call in flight', () => {
  // Each test kills one of its own two workers.
  let stack: TestStack | undefined;
  let hook: Awaited<ReturnType<typeof startApplier>> | undefined;
  beforeEach(async () => {
    hook = await startApplier();
    stack = await TestStack.start({ workers: 2, env: { CODEMODE_LEASE_MS: '2000', CODEMODE_REPLY_GRACE_MS: '1000' } });
  });
  afterEach(async () => {
    await stack?.stop();
    hook?.server.close();
  });

  /** Kills -9 the worker that started `runId` (read from its run.started). */
  async function killStarter(sid: string, runId?: string): Promise<string> {
    const started = (await stack!.client().events(sid, { limit: 100 })).events.find(
      (event) => event.type === 'run.started' && (runId === undefined || event.runId === runId),
    );
    const victim = stack!.workers.find((worker) => String(started?.data.workerId).includes(`-${worker.pid}-`));
    expect(victim).toBeDefined();
    await victim!.kill();
    return started!.runId!;
  }

  it('a restartSafe first leg: rebuilt on the other worker at once, each effect once, the same key on both attempts', async () => {
    const { keys, rows, url, first } = hook!;
    const client = stack!.client();
    await client.putSession('idem', { codeMode: { timeoutMs: 20_000 } });
    await client.putTools('idem', [{ name: 'upsert', description: 'applies each key once', endpoint: `${url}/upsert`, idempotent: true }]);
    const pending = client.exec('idem', {
      title: 'writes',
      restartSafe: true,
      code: 'const a = await upsert({ id: 1 }); const b = await upsert({ id: 2 }); return [a.row, b.row];',
    });
    await first;
    const runId = await killStarter('idem');

    const result: CodeModeResult = await pending;
    expect(result).toMatchObject({ status: 'completed', value: [1, 2], replaySafe: true });
    expect(keys).toEqual([`${runId}:1`, `${runId}:1`, `${runId}:2`]);
    expect([...rows]).toEqual([
      [`${runId}:1`, 1],
      [`${runId}:2`, 2],
    ]);
    const log = (await client.events('idem', { limit: 1000 })).events.filter((event) => event.runId === runId);
    expect(log.map((event) => [event.type, event.data.callKey])).toEqual([
      ['run.requested', undefined],
      ['run.started', undefined],
      ['tool.called', `${runId}:1`],
      ['run.recovered', undefined],
      ['tool.called', `${runId}:1`],
      ['tool.settled', undefined],
      ['tool.called', `${runId}:2`],
      ['tool.settled', undefined],
      ['run.completed', undefined],
    ]);
  });

  it('a rebuilt first leg that does not end within the budget plus the grace: the exec answers waiting with the runId, a later keyed wait gets the outcome, and its key again the same', async () => {
    const client = stack!.client();
    hook!.retryDelay.ms = 4000;
    await client.putSession('idem-slow-exec', { codeMode: { timeoutMs: 1500 } });
    await client.putTools('idem-slow-exec', [
      { name: 'upsert', description: 'applies each key once', endpoint: `${hook!.url}/upsert`, idempotent: true },
    ]);
    const pending = client.exec('idem-slow-exec', {
      title: 'writes',
      restartSafe: true,
      code: 'const a = await upsert({ id: 1 }); const b = await upsert({ id: 2 }); return [a.row, b.row];',
    });
    await hook!.first;
    const runId = await killStarter('idem-slow-exec');
    expect(await pending).toEqual(expect.objectContaining({ status: 'waiting', runId, reason: 'pending_tools', replaySafe: true }));
    // Once the other worker rebuilds the leg (run.recovered), the leg is not an orphan: a keyed wait
    // waits for its owed answer. Each wait has a key of its own: the first to find the rebuilt leg
    // parked takes its owed answer.
    const rebuiltBy = Date.now() + 10_000;
    const rebuilt = async (): Promise<boolean> =>
      (await client.events('idem-slow-exec', { limit: 100 })).events.some((event) => event.type === 'run.recovered');
    while (!(await rebuilt()) && Date.now() < rebuiltBy) await new Promise((resolve) => setTimeout(resolve, 50));
    const answered: { key: string; result: CodeModeResult }[] = [];
    let result: CodeModeResult;
    const until = Date.now() + 30_000;
    do {
      const key = `wait-${answered.length}`;
      result = await client.wait('idem-slow-exec', runId, { idempotencyKey: key });
      answered.push({ key, result });
    } while (result.status === 'waiting' && Date.now() < until);
    expect(result).toEqual(expect.objectContaining({ status: 'completed', value: [1, 2], replaySafe: true }));
    // SPEC §17: a keyed wait that took an owed answer (the rebuilt leg parked on its pending call)
    // recorded it under its key: that key again answers the same, as every other key does. (A
    // wait told the owed leg is still running took nothing: its key is not bound to an answer.)
    const taken = answered.filter(({ result: r }) => r.status !== 'waiting' || r.pendingToolCalls !== undefined);
    expect(taken[0]?.result).toEqual(expect.objectContaining({ status: 'waiting', reason: 'pending_tools', runId }));
    for (const { key, result: first } of taken) expect(await client.wait('idem-slow-exec', runId, { idempotencyKey: key })).toEqual(first);
    expect(hook!.keys).toEqual([`${runId}:1`, `${runId}:1`, `${runId}:2`]);
    expect([...hook!.rows]).toEqual([
      [`${runId}:1`, 1],
      [`${runId}:2`, 2],
    ]);
  });

  it('a parked run (SPEC §12): its image is restored elsewhere and the call in flight at the park is made again with its key', async () => {
    const { keys, url } = hook!;
    const client = stack!.client();
    await client.putSession('idem-parked', { codeMode: { timeoutMs: 1000 } });
    await client.putTools('idem-parked', [
      { name: 'upsert', description: 'applies each key once', endpoint: `${url}/upsert`, idempotent: true },
    ]);
    const parked = await client.exec('idem-parked', { title: 'parks', code: 'const a = await upsert({ id: 1 }); return a.row;' });
    expect(parked).toMatchObject({ status: 'waiting', reason: 'pending_tools' });
    const runId = (parked as Extract<CodeModeResult, { status: 'waiting' }>).runId;
    await killStarter('idem-parked', runId);
    // Until the dead owner's lease lapses, a wait answers `waiting` again (SPEC §3).
    let result: CodeModeResult = parked;
    const until = Date.now() + 30_000;
    while (result.status === 'waiting' && Date.now() < until) result = await client.wait('idem-parked', runId);
    expect(result).toMatchObject({ status: 'completed', value: 1 });
    expect(keys).toEqual([`${runId}:1`, `${runId}:1`]);
    const calledKeys = (await client.events('idem-parked', { limit: 1000 })).events
      .filter((event) => event.runId === runId && event.type === 'tool.called')
      .map((event) => event.data.callKey);
    expect(calledKeys).toEqual([`${runId}:1`, `${runId}:1`]);
  });

  /** A restartSafe run parked by a yield, whose wait-resumed leg writes twice through the idempotent tool. */
  async function parkedWriter(sid: string, timeoutMs: number): Promise<string> {
    const client = stack!.client();
    await client.putSession(sid, { codeMode: { timeoutMs } });
    await client.putTools(sid, [
      { name: 'upsert', description: 'applies each key once', endpoint: `${hook!.url}/upsert`, idempotent: true },
    ]);
    const parked = await client.exec(sid, {
      title: 'writes after a yield',
      restartSafe: true,
      code: 'await yield_control(); const a = await upsert({ id: 1 }); const b = await upsert({ id: 2 }); return [a.row, b.row];',
    });
    expect(parked).toMatchObject({ status: 'waiting', reason: 'yield' });
    return (parked as Extract<CodeModeResult, { status: 'waiting' }>).runId;
  }

  /** The effects and keys SPEC §16 promises: each effect once, the same key on both attempts. */
  async function expectAppliedOnce(sid: string, runId: string): Promise<void> {
    expect(hook!.keys).toEqual([`${runId}:1`, `${runId}:1`, `${runId}:2`]);
    expect([...hook!.rows]).toEqual([
      [`${runId}:1`, 1],
      [`${runId}:2`, 2],
    ]);
    const log = (await stack!.client().events(sid, { limit: 1000 })).events.filter((event) => event.runId === runId);
    expect(log.filter((event) => event.type === 'tool.called').map((event) => event.data.callKey)).toEqual([
      `${runId}:1`,
      `${runId}:1`,
      `${runId}:2`,
    ]);
    expect(log.filter((event) => /^run\.(completed|failed|expired|lost)$/.test(event.type)).map((event) => event.type)).toEqual([
      'run.completed',
    ]);
    expect(log.filter((event) => event.type === 'run.recovered')).toHaveLength(1);
  }

  it('a leg a wait resumed: rebuilt on the other worker at once, and the wait in flight answers its outcome', async () => {
    const client = stack!.client();
    const runId = await parkedWriter('idem-wait', 20_000);
    const inFlight = client.wait('idem-wait', runId);
    await hook!.first;
    await killStarter('idem-wait', runId);
    // Without the rebuild at once this wait would answer only after its 20 s budget.
    const started = Date.now();
    expect(await inFlight).toEqual(expect.objectContaining({ status: 'completed', value: [1, 2], replaySafe: true }));
    expect(Date.now() - started).toBeLessThan(15_000);
    await expectAppliedOnce('idem-wait', runId);
  });

  it('a rebuilt leg that does not end within the budget plus the grace: the wait in flight answers waiting with the runId, a later wait gets the outcome', async () => {
    const client = stack!.client();
    hook!.retryDelay.ms = 4000;
    const runId = await parkedWriter('idem-slow', 1500);
    const inFlight = client.wait('idem-slow', runId);
    await hook!.first;
    await killStarter('idem-slow', runId);
    expect(await inFlight).toEqual(expect.objectContaining({ status: 'waiting', runId, reason: 'pending_tools', replaySafe: true }));
    let result: CodeModeResult = await client.wait('idem-slow', runId);
    const until = Date.now() + 30_000;
    while (result.status === 'waiting' && Date.now() < until) result = await client.wait('idem-slow', runId);
    expect(result).toEqual(expect.objectContaining({ status: 'completed', value: [1, 2], replaySafe: true }));
    await expectAppliedOnce('idem-slow', runId);
  });

  it('a wait-resumed leg that is not restartSafe still ends run.lost, and its wait answers runtime_unavailable', async () => {
    const client = stack!.client();
    await client.putSession('plain-wait', { codeMode: { timeoutMs: 1500 } });
    await client.putTools('plain-wait', [{ name: 'write', description: 'a plain write', endpoint: `${hook!.url}/write` }]);
    const parked = await client.exec('plain-wait', {
      title: 'writes',
      code: 'await yield_control(); return (await write({ id: 1 })).row;',
    });
    expect(parked).toMatchObject({ status: 'waiting', reason: 'yield' });
    const runId = (parked as Extract<CodeModeResult, { status: 'waiting' }>).runId;
    const inFlight = client.wait('plain-wait', runId);
    await hook!.first;
    await killStarter('plain-wait', runId);
    expect(await inFlight).toMatchObject({ status: 'failed', code: 'runtime_unavailable' });
    // Ended lost by the wait that found its worker gone, or by the next one.
    const until = Date.now() + 15_000;
    let status = (await client.getRun('plain-wait', runId)).status;
    while (status === 'running' && Date.now() < until) {
      await client.wait('plain-wait', runId);
      status = (await client.getRun('plain-wait', runId)).status;
    }
    expect(status).toBe('lost');
    // The write in flight was never sent again.
    expect(hook!.keys).toEqual([`${runId}:1`]);
  });
});
