import { createServer, type Server } from 'node:http';
import type { Cluster, Redis } from 'ioredis';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult, Event } from '@codemode/contracts';
import { KeySpace } from '@codemode/events';
import { sleep } from './chaos/chaos-helpers';
import { stackRedis, TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

/** A webhook tool's endpoint that records the input of every call it gets. */
function startHook(): Promise<{ server: Server; url: string; inputs: unknown[] }> {
  const inputs: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      inputs.push((JSON.parse(body) as { input?: unknown }).input);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, inputs });
    }),
  );
}

const ofRun = (events: Event[], runId: string): string[] => events.filter((e) => e.runId === runId).map((e) => e.type);

/** The session's events so far (none while its first exec has not created it). */
const eventsOf = (client: CodeModeClient, sid: string): Promise<Event[]> =>
  client.events(sid).then(
    (page) => page.events,
    () => [],
  );

/**
 * SPEC §13: a worker may start a new cell before writing its claim, only while the cell has made
 * no bridge request and for at most 100 ms; a cell that ends first is claimed and ended by one
 * script, which declines when the run was abandoned meanwhile.
 */
describe('a new cell starts before its claim (SPEC §13)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let hook: Awaited<ReturnType<typeof startHook>>;
  let redis: Redis | Cluster;
  /** How many saved values (`results.save`) the session holds: a write no run event fences. */
  const savedValues = (sid: string): Promise<number> =>
    redis.zcard(new KeySpace(stack.prefix).resultsIndex({ tenant: 'default', sessionId: sid }));

  beforeAll(async () => {
    hook = await startHook();
    stack = await TestStack.start();
    client = stack.client();
    redis = stackRedis();
  });
  afterAll(async () => {
    await redis?.quit();
    await stack?.stop();
    hook?.server.close();
  });

  it('a short cell is claimed by its end: its log says run.started, then its end, and its view names its worker', async () => {
    const sid = 'claims-short';
    const result = await client.exec(sid, { title: 'short', code: 'return 1 + 1;' });
    expect(result).toMatchObject({ status: 'completed', value: 2 });
    const { events } = await client.events(sid);
    const started = events.find((e) => e.type === 'run.started');
    const runId = started?.runId ?? '';
    expect(ofRun(events, runId)).toEqual(['run.requested', 'run.started', 'run.completed']);
    const workerId = (started?.data as { workerId: string }).workerId;
    expect(started?.data).toEqual({ workerId, epoch: 1 });
    expect(await client.getRun(sid, runId)).toMatchObject({ status: 'completed', owner: workerId, epoch: 1 });
  });

  it.each([
    ['computes past 100 ms', 'const t = Date.now(); while (Date.now() - t < 800) {} return 1;'],
    ['awaits a timer', 'await new Promise((resolve) => setTimeout(resolve, 800)); return 1;'],
  ])('a cell that %s reads running before it ends', async (what, code) => {
    const sid = `claims-${what.split(' ')[0]}`;
    let answered = false;
    const answer = client.exec(sid, { title: what, code }).finally(() => (answered = true));
    let seen: { runId: string; status: string } | undefined;
    for (const until = Date.now() + 5_000; !seen && !answered && Date.now() < until; await sleep(20)) {
      const started = (await eventsOf(client, sid)).find((e) => e.type === 'run.started');
      if (started) seen = { runId: started.runId ?? '', status: (await client.getRun(sid, started.runId ?? '')).status };
    }
    expect(answered).toBe(false);
    expect(seen?.status).toBe('running');
    await expect(answer).resolves.toMatchObject({ status: 'completed', value: 1 });
  });

  it('a cell abandoned before its claim makes none of its calls, and its log ends at the abandonment (adversarial)', async () => {
    // The cell computes for 80 ms, then saves a value (a write of its own, which no event of the
    // run fences) and calls a webhook: were its requests not held for its claim, an abort that
    // lands while it computes would leave the value saved.
    let abandoned = 0;
    for (let attempt = 1; attempt <= 6 && abandoned < 2; attempt += 1) {
      const sid = `claims-abandoned-${attempt}`;
      await client.putTools(sid, [{ name: 'notify', description: 'Tells the outside world', endpoint: `${hook.url}/notify` }]);
      const code = `const t = Date.now(); while (Date.now() - t < 80) {} await results.save({ attempt: ${attempt} }); await notify({ attempt: ${attempt} }); return 1;`;
      const answer: Promise<CodeModeResult | Error> = client.exec(sid, { title: 'abandoned', code }).catch((e: Error) => e);
      let runId: string | undefined;
      for (const until = Date.now() + 2_000; !runId && Date.now() < until; await sleep(2)) {
        runId = (await eventsOf(client, sid)).find((e) => e.type === 'run.requested')?.runId;
      }
      const abort = await client.raw('DELETE', `/v1/sessions/${sid}/runs/${runId}`);
      const abortedAt = Date.now();
      const result = await answer;
      const answeredInMs = Date.now() - abortedAt;
      await sleep(300);
      const events = await eventsOf(client, sid);
      // The abort met the run claimed already (it began its request or passed 100 ms): another case.
      if (ofRun(events, runId ?? '').includes('run.started')) continue;
      abandoned += 1;
      expect(abort.status).toBe(200);
      expect(abort.body).toMatchObject({ status: 'failed', code: 'aborted' });
      expect(result).toMatchObject({ status: 'failed', code: 'aborted' });
      // Its worker tells the exec how the run ended once its claim is declined, not its start budget (10 s).
      expect(answeredInMs).toBeLessThan(5_000);
      expect(ofRun(events, runId ?? '')).toEqual(['run.requested', 'run.failed']);
      expect(hook.inputs).not.toContainEqual({ attempt });
      expect(await savedValues(sid)).toBe(0);
    }
    expect(abandoned).toBeGreaterThan(0);
    // The worker goes on serving, and what the check counts is there when a claimed cell writes it.
    const sid = 'claims-abandoned-after';
    await client.putTools(sid, [{ name: 'notify', description: 'Tells the outside world', endpoint: `${hook.url}/notify` }]);
    const code = 'await results.save({ attempt: 0 }); await notify({ attempt: 0 }); return 2;';
    await expect(client.exec(sid, { title: 'after', code })).resolves.toMatchObject({ status: 'completed', value: 2 });
    expect(hook.inputs).toContainEqual({ attempt: 0 });
    expect(await savedValues(sid)).toBe(1);
  });
});
