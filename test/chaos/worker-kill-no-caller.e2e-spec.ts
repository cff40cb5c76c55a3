import { createServer, type Server } from 'node:http';
import type { CodeModeResult, Event } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';
import { allEvents, endedRunError, sleep } from './chaos-helpers';

jest.setTimeout(120_000);

const LEASE_MS = 2000;
const GRACE_MS = 1000;
/** The cell's budget: the most a session may set, so no caller's deadline (and no live-run sweep) comes near the kill. */
const BUDGET_MS = 60_000;
/**
 * From the kill to the rebuilt leg's end: the lease lapses within one lease, a worker notices
 * within half a lease more, and the replay runs; bounded generously for a loaded 2-core machine,
 * yet far below what the live-run sweep would take (the wait's budget plus the grace and a lease,
 * 63 s after the wait began).
 */
const REBUILT_WITHIN_MS = 6 * LEASE_MS;

/** A replay-safe webhook tool whose first request is held open (its worker dies with it in flight); later ones answer how many came. */
function startHolder(): Promise<{ server: Server; url: string; first: Promise<void>; calls: () => number }> {
  let calls = 0;
  let arrived: () => void = () => undefined;
  const first = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      if (calls === 1) return arrived();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ n: calls }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      resolve({ server, url, first, calls: () => calls });
    }),
  );
}

const atMs = (event: Event | undefined): number => (event ? Date.parse(event.at) : NaN);

/**
 * SPEC §17 "rebuilt at once, caller or not": a restartSafe leg a wait resumed is running a call
 * when its API is killed (no caller is left anywhere) and then its worker is killed with -9. The
 * other worker finds the lapsed lease, reads the dead worker's running legs and rebuilds this one
 * by replay at once: the run's log shows it recovered and completed within a few leases of the
 * kill, not when the live-run sweep would have looked (a lease after the wait's 60 s budget).
 */
describe('chaos: kill -9 of a worker running a restartSafe leg that no caller waits on', () => {
  let stack: TestStack;
  let hook: Awaited<ReturnType<typeof startHolder>>;
  beforeAll(async () => {
    hook = await startHolder();
    stack = await TestStack.start({
      workers: 2,
      env: { CODEMODE_LEASE_MS: String(LEASE_MS), CODEMODE_REPLY_GRACE_MS: String(GRACE_MS) },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.server.close();
  });

  it('rebuilds the leg and ends the run within a few leases of the kill', async () => {
    const sid = 'no-caller';
    const client = stack.client();
    await client.putSession(sid, { codeMode: { timeoutMs: BUDGET_MS } });
    await client.putTools(sid, [{ name: 'hold', description: 'holds its first call', endpoint: `${hook.url}/hold`, replaySafe: true }]);
    const parked = await client.exec(sid, {
      title: 'resumed leg',
      restartSafe: true,
      code: 'await yield_control(); const a = await hold({ k: 1 }); return a.n;',
    });
    expect(parked).toMatchObject({ status: 'waiting', reason: 'yield' });
    const runId = (parked as Extract<CodeModeResult, { status: 'waiting' }>).runId;

    // The wait resumes the leg on the run's owner, which calls the tool and waits for it.
    const inFlight = client.wait(sid, runId).catch((error: unknown) => error);
    await hook.first;
    // No caller anywhere: the API that held the wait dies (a new one takes its place, with no call in flight).
    await stack.restartApi({ signal: 'SIGKILL' });
    expect(await inFlight).toBeInstanceOf(Error);
    const owner = (await client.getRun(sid, runId)).owner;
    const victim = stack.workers.find((worker) => String(owner).includes(`-${worker.pid}-`));
    expect(victim).toBeDefined();
    const killedAt = Date.now();
    await victim!.kill();

    let run = await client.getRun(sid, runId);
    const until = killedAt + 4 * REBUILT_WITHIN_MS;
    while (run.status === 'running' && Date.now() < until) {
      await sleep(200);
      run = await client.getRun(sid, runId);
    }
    const log = (await allEvents(client, sid)).filter((event) => event.runId === runId);
    const recovered = log.find((event) => event.type === 'run.recovered');
    const completed = log.find((event) => event.type === 'run.completed');
    process.stdout.write(
      `restartSafe leg with no caller, worker killed: recovered ${atMs(recovered) - killedAt} ms and completed ${atMs(completed) - killedAt} ms after the kill (lease ${LEASE_MS} ms)\n`,
    );
    expect(run).toMatchObject({ status: 'completed', lastResult: { status: 'completed', value: 2 } });
    expect(log.map((event) => event.type)).toEqual([
      'run.requested',
      'run.started',
      'run.parked',
      'run.resumed',
      'tool.called',
      'run.recovered',
      'tool.called',
      'tool.settled',
      'run.completed',
    ]);
    expect(atMs(completed) - killedAt).toBeLessThan(REBUILT_WITHIN_MS);
    expect(String(recovered?.data.fromWorker)).toBe(owner);
    // Nobody was waiting when it was rebuilt, and its caller's budget had not run out: nothing is
    // owed, so a later wait answers as on any ended run and points at the run's outcome.
    expect(await client.wait(sid, runId)).toMatchObject({ status: 'failed', error: endedRunError(sid, runId) });
    expect(hook.calls()).toBe(2);
  });
});
