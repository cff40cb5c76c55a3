import type { CodeModeClient } from '@codemode/client';
import type { Event } from '@codemode/contracts';
import { PrivateRedis } from '../utils/private-redis';
import { TestStack } from '../utils/test-stack';
import { allEvents, endedRunError, execPath, post, show, sleep, terminalsByRun, waitPath, type Exchange } from './chaos-helpers';

jest.setTimeout(120_000);

const LEASE_MS = 1500;
const PAUSE_MS = 3 * LEASE_MS;
const PARKED = 6;
const RUNNING = 4;
const DURING = 4;
/** Bound for every run to reach its one terminal event: its budget plus a lease, and a margin. */
const SETTLE_MS = 30_000;

const sid = (kind: string, i: number): string => `wp-${kind}-${i}`;

/**
 * SPEC §6 and §2 under a stalled worker, on a Redis of its own: one worker holds parked and
 * running cells and is paused (SIGSTOP) for three leases while a second one serves. Every call
 * gets a contract answer; parked runs whose holder's lease lapsed are restored elsewhere and
 * completed by wait; the paused worker's running cells end once, whoever ends them; the paused
 * worker's late writes are fenced; new execs complete meanwhile; every answer agrees with the log.
 */
describe('chaos: a worker paused (SIGSTOP) past its lease while it holds parked and running cells', () => {
  let redis: PrivateRedis;
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await TestStack.start({
      workers: 1,
      redisUrl: redis.url,
      env: { CODEMODE_LEASE_MS: String(LEASE_MS), CODEMODE_TIMEOUT_MS: '8000' },
    });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.cleanup();
  });

  it('answers every call in contract terms and ends every run once, as its answers say', async () => {
    const paused = stack.workers[0];
    // ---- on the one worker: PARKED parked runs and RUNNING cells in a host timer
    const parkedIds = await Promise.all(
      Array.from({ length: PARKED }, async (_, i) => {
        const ex = await post(client, execPath(sid('park', i)), { title: `park ${i}`, code: `await yield_control("p"); return ${i};` });
        if (ex.kind !== 'answer' || ex.result.status !== 'waiting') throw new Error(`park ${i}: ${show(ex)}`);
        return ex.result.runId;
      }),
    );
    const running = Array.from({ length: RUNNING }, (_, i) =>
      post(client, execPath(sid('run', i)), { title: `run ${i}`, code: `await new Promise(r => setTimeout(r, 1500)); return ${i};` }),
    );
    const startedBy = Date.now() + 10_000;
    const started = async (): Promise<boolean> => {
      for (let i = 0; i < RUNNING; i += 1) {
        const events = await client.events(sid('run', i)).catch(() => ({ events: [] as Event[] }));
        if (!events.events.some((e) => e.type === 'run.started')) return false;
      }
      return true;
    };
    while (!(await started()) && Date.now() < startedBy) await sleep(50);
    expect(await started()).toBe(true);

    // ---- a second worker joins; the first stalls for three leases
    await stack.addWorker();
    paused.pause();
    const pausedAt = Date.now();
    const during = Array.from({ length: DURING }, (_, i) =>
      post(client, execPath(sid('new', i)), { title: `new ${i}`, code: `return ${i} * 3;` }),
    );
    // Waits once the paused worker's lease has lapsed: its parked runs are restored on the other one.
    await sleep(2 * LEASE_MS);
    const waitAnswers = new Map<number, Exchange[]>();
    const waits = parkedIds.map(async (runId, i) => {
      const answers: Exchange[] = [];
      waitAnswers.set(i, answers);
      const until = Date.now() + SETTLE_MS;
      for (;;) {
        const ex = await post(client, waitPath(sid('park', i)), { runId });
        answers.push(ex);
        const again = ex.kind === 'answer' && ex.result.status === 'waiting' && ex.result.runId === runId;
        if (!again || Date.now() > until) return;
        await sleep(200);
      }
    });
    await sleep(Math.max(0, PAUSE_MS - (Date.now() - pausedAt)));
    paused.resume();
    const [runningAnswers, duringAnswers] = await Promise.all([Promise.all(running), Promise.all(during), Promise.all(waits)]);

    // ---- answers
    expect(duringAnswers.map(show)).toEqual(Array.from({ length: DURING }, (_, i) => `completed ${i * 3}`));
    expect(parkedIds.map((_, i) => show(waitAnswers.get(i)?.at(-1)))).toEqual(parkedIds.map((_, i) => `completed ${i}`));
    // A cell of the paused worker completes once it resumes, or (if the API gave up on it first) its
    // exec says where to read the outcome; nothing else.
    const NO_ANSWER =
      'failed runtime_unavailable the worker running this cell did not answer within its budget; read GET /v1/sessions/{sid}/runs/{runId} for its outcome.';
    for (const [i, ex] of runningAnswers.entries())
      expect([i, [`completed ${i}`, NO_ANSWER].includes(show(ex)) ? 'ok' : show(ex)]).toEqual([i, 'ok']);

    // ---- every run: exactly one terminal event within its budget plus a lease, agreeing with its answer
    const sessions = [
      ...parkedIds.map((_, i) => sid('park', i)),
      ...runningAnswers.map((_, i) => sid('run', i)),
      ...duringAnswers.map((_, i) => sid('new', i)),
    ];
    const until = Date.now() + SETTLE_MS;
    let logs = new Map<string, Event[]>();
    const read = async (): Promise<void> => {
      logs = new Map(await Promise.all(sessions.map(async (s) => [s, await allEvents(client, s)] as const)));
    };
    const unended = (): string[] =>
      [...logs].flatMap(([s, events]) => [...terminalsByRun(events)].filter(([, t]) => t.length === 0).map(([runId]) => `${s} ${runId}`));
    await read();
    while (unended().length > 0 && Date.now() < until) {
      await sleep(250);
      await read();
    }
    expect(unended()).toEqual([]);
    const disagreements: string[] = [];
    for (const [s, events] of logs) {
      for (const [runId, terminals] of terminalsByRun(events)) {
        const value = Number(s.split('-').at(-1));
        const want = s.includes('-new-') ? value * 3 : value;
        const answered = s.includes('-run-') ? runningAnswers[value] : undefined;
        const completedOnce =
          terminals.length === 1 &&
          terminals[0].type === 'run.completed' &&
          (terminals[0].data.result as { value?: unknown }).value === want;
        // A paused cell answered "did not answer" may have been ended lost (its worker's lease lapsed) or completed.
        const lostAfterNoAnswer = answered && show(answered) === NO_ANSWER && terminals.length === 1 && terminals[0].type === 'run.lost';
        if (!completedOnce && !lostAfterNoAnswer)
          disagreements.push(`${s} ${runId}: ${terminals.map((e) => `${e.type} ${JSON.stringify(e.data)}`).join(', ')}`);
      }
    }
    expect(disagreements).toEqual([]);
    // A wait on an ended parked run answers where to read it.
    const again = await post(client, waitPath(sid('park', 0)), { runId: parkedIds[0] });
    expect(show(again)).toBe(`failed invalid_input ${endedRunError(sid('park', 0), parkedIds[0])}`);
    expect(stack.workers.map((w) => w.alive)).toEqual([true, true]);
    console.log(
      `worker-pause: paused ${PAUSE_MS} ms (lease ${LEASE_MS} ms); ${PARKED} parked runs completed by wait on the other worker ` +
        `(${[...waitAnswers.values()].reduce((n, a) => n + a.length, 0)} waits); running cells: ${runningAnswers.map(show).join(' | ')}; ` +
        `${DURING} execs during the pause completed`,
    );
  });
});
