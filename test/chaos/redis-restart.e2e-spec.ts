import type { CodeModeClient } from '@codemode/client';
import type { Event, RunView } from '@codemode/contracts';
import { PrivateRedis } from '../utils/private-redis';
import { TestStack } from '../utils/test-stack';
import {
  allEvents,
  busiestLogSecond,
  execPath,
  NO_ANSWER_ERROR,
  NOT_STARTED_ERROR,
  post,
  show,
  sleep,
  STORE_UNAVAILABLE_PATTERN,
  terminalsByRun,
  waitPath,
  type Exchange,
} from './chaos-helpers';

jest.setTimeout(90_000);

const EXECS = 30;
const NEW_EXECS = 10;
/** Gap between two execs of the batch; Redis stops after RESTART_AFTER of them and stays down DOWN_MS. */
const STAGGER_MS = 60;
const RESTART_AFTER = 12;
const DOWN_MS = 1500;
const TIMEOUT_MS = 4000;

const sid = (i: number): string => `rr-${i}`;
const parks = (i: number): boolean => i % 3 === 0;

/** A few awaited host timers, so the cell is inside the bridge when Redis goes away. */
function cellCode(i: number): string {
  if (parks(i)) {
    return `await new Promise(r => setTimeout(r, 30)); await yield_control("check in"); await new Promise(r => setTimeout(r, 60)); return ${i};`;
  }
  return `let n = 0; for (let k = 0; k < 4; k++) { await new Promise(r => setTimeout(r, 60)); n++; } return n === 4 ? ${i} : -1;`;
}

interface Call {
  i: number;
  call: 'exec' | 'wait';
  runId?: string;
  sentAt: number;
  exchange: Exchange;
}

describe('chaos: Redis restarts while cells run and park (appendonly keeps what was acknowledged)', () => {
  let redis: PrivateRedis;
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const logLevel: Record<string, string> = process.env.CHAOS_LOG_LEVEL ? { LOG_LEVEL: process.env.CHAOS_LOG_LEVEL } : {};
    stack = await TestStack.start({ workers: 1, redisUrl: redis.url, env: { CODEMODE_TIMEOUT_MS: String(TIMEOUT_MS), ...logLevel } });
    client = stack.client();
    // A first cell warms the worker's sandbox thread, so the batch's early cells finish (and are
    // acknowledged) before Redis stops even on a loaded CI machine.
    expect(show(await post(client, execPath('rr-warm'), { title: 'warm', code: cellCode(1) }))).toBe('completed 1');
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.cleanup();
  });

  it('answers every exec/wait, recovers without restarting api or worker, and keeps acknowledged runs', async () => {
    const calls: Call[] = [];
    let firstAcknowledged: () => void = () => undefined;
    const acknowledgedOnce = new Promise<void>((resolve) => (firstAcknowledged = resolve));
    const record = async (i: number, call: 'exec' | 'wait', body: unknown, runId?: string): Promise<Exchange> => {
      const sentAt = Date.now();
      const exchange = await post(client, call === 'exec' ? execPath(sid(i)) : waitPath(sid(i)), body);
      calls.push({ i, call, runId, sentAt, exchange });
      if (exchange.kind === 'answer' && exchange.result.status === 'completed') firstAcknowledged();
      return exchange;
    };
    const lastOf = (runId: string): Exchange | undefined => calls.filter((c) => c.runId === runId).at(-1)?.exchange;
    /** True once a wait on the run needs no repeat: it completed, or failed other than runtime_unavailable (or not HTTP 200). */
    const settled = (runId: string): boolean => {
      const last = lastOf(runId);
      if (last === undefined) return false;
      if (last.kind !== 'answer') return last.kind === 'http_error'; // a cut-off call is asked again
      return last.result.status === 'completed' || (last.result.status === 'failed' && last.result.code !== 'runtime_unavailable');
    };
    const parkedRunIds = new Map<number, string>();
    const pids = [stack.api.pid, ...stack.workers.map((w) => w.pid)];

    // ---- the batch, with Redis restarted (clean SIGTERM, same port and dir) in the middle of it
    const t0 = Date.now();
    const stopAt = t0 + RESTART_AFTER * STAGGER_MS;
    let restartBegan = Infinity;
    let restartEnded = Infinity;
    const restart = (async () => {
      await sleep(stopAt - Date.now());
      // Stop Redis only once some run was acknowledged, or there is nothing to check it kept.
      let giveUp: NodeJS.Timeout | undefined;
      await Promise.race([acknowledgedOnce, new Promise((resolve) => (giveUp = setTimeout(resolve, 15_000)))]);
      clearTimeout(giveUp);
      restartBegan = Date.now();
      await redis.stop();
      await sleep(DOWN_MS);
      await redis.launch();
      restartEnded = Date.now();
    })();
    const batch = Array.from({ length: EXECS }, async (_, i) => {
      await sleep(i * STAGGER_MS);
      const first = await record(i, 'exec', { title: `chaos ${i}`, code: cellCode(i) });
      if (first.kind !== 'answer' || first.result.status !== 'waiting') return;
      const runId = first.result.runId;
      parkedRunIds.set(i, runId);
      // A third of the parked runs are waited at once, a third just before Redis stops (their
      // resumed leg meets the outage), a third while Redis is down; unfinished ones are waited again.
      if (i % 9 === 3) await sleep(stopAt - 20 - Date.now());
      if (i % 9 === 6) await sleep(stopAt + DOWN_MS / 3 - Date.now());
      for (let attempt = 0; attempt < 3 && !settled(runId); attempt += 1) {
        if (attempt > 0) await sleep(400);
        await record(i, 'wait', { runId }, runId);
      }
    });
    await Promise.all([restart, ...batch]);

    // ---- Redis is back: the API says ready again, with the same api and worker processes
    const isReady = (): Promise<boolean> =>
      fetch(`${stack.baseUrl}/health/ready`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.status === 200,
        () => false,
      );
    const readyBy = Date.now() + 20_000;
    let ready = false;
    while (!ready && stack.api.alive && Date.now() < readyBy) {
      ready = await isReady();
      if (!ready) await sleep(100);
    }
    // The API and the worker live through the outage: an ioredis rejection nothing handles
    // is logged, not fatal (see logUnhandledRejections).
    expect(stack.api.alive).toBe(true);
    if (!ready) {
      const res = await client.raw('GET', '/health/ready').catch((e: unknown) => String(e));
      console.log(`NOT READY: redis running=${redis.running}, /health/ready ${JSON.stringify(res)}\n${stack.logs()}`);
    }
    expect(ready).toBe(true);
    // Same processes as before the restart, all alive: nothing was restarted but Redis.
    expect([stack.api.pid, ...stack.workers.map((w) => w.pid)]).toEqual(pids);
    expect([stack.api.alive, ...stack.workers.map((w) => w.alive)]).toEqual([true, true]);

    // Parked runs not finished during the chaos are waited again until they settle (bounded).
    await Promise.all(
      [...parkedRunIds].map(async ([i, runId]) => {
        const until = Date.now() + 20_000;
        while (!settled(runId) && Date.now() < until) {
          const answer = await record(i, 'wait', { runId }, runId);
          if (answer.kind === 'answer' && answer.result.status === 'failed') await sleep(250);
        }
      }),
    );

    // ---- new execs complete on the same api and worker processes
    const fresh = await Promise.all(
      Array.from({ length: NEW_EXECS }, (_, k) =>
        post(client, execPath(`rr-new-${k}`), { title: `after ${k}`, code: cellCode(1 + 3 * k) }),
      ),
    );
    expect(fresh.map(show)).toEqual(Array.from({ length: NEW_EXECS }, (_, k) => `completed ${1 + 3 * k}`));

    // ---- read back every session's event log and the projection of every run in it
    const sessions = new Map<string, Event[]>();
    for (let i = 0; i < EXECS; i += 1) {
      const res = await client.raw('GET', `/v1/sessions/${sid(i)}/events?limit=1`);
      if (res.status === 404) continue; // never created: its only exec met the outage
      expect([sid(i), res.status]).toEqual([sid(i), 200]);
      sessions.set(sid(i), await allEvents(client, sid(i)));
    }
    for (let k = 0; k < NEW_EXECS; k += 1) sessions.set(`rr-new-${k}`, await allEvents(client, `rr-new-${k}`));
    const views = new Map<string, RunView>();
    for (const [session, events] of sessions) {
      for (const runId of terminalsByRun(events).keys()) views.set(runId, await client.getRun(session, runId));
    }
    const noTerminal: string[] = [];
    const multiTerminal: string[] = [];
    for (const [session, events] of sessions) {
      for (const [runId, terminals] of terminalsByRun(events)) {
        if (terminals.length > 1) multiTerminal.push(`${session} ${runId}: ${terminals.map((e) => e.type).join(', ')}`);
        if (terminals.length > 0) continue;
        const view = views.get(runId);
        const types = events.filter((e) => e.runId === runId).map((e) => e.type);
        const answers = calls.filter((c) => sid(c.i) === session).map((c) => `${c.call}: ${show(c.exchange)}`);
        noTerminal.push(
          `${session} ${runId}: status ${view?.status} owner ${view?.owner}; events ${types.join(', ')}; answers ${answers.join(' | ')}`,
        );
      }
    }

    // ---- every HTTP call got an answer, and only the answers SPEC allows
    const unexpected: string[] = [];
    let noAnswerFailures = 0;
    for (const c of calls) {
      const ex = c.exchange;
      const where = `${c.call} #${c.i}${c.runId ? ` ${c.runId}` : ''}`;
      if (ex.kind !== 'answer') {
        unexpected.push(`${where}: ${show(ex)}`);
        continue;
      }
      const r = ex.result;
      if (r.status === 'completed') {
        if (r.value !== c.i) unexpected.push(`${where}: wrong value ${show(ex)}`);
      } else if (r.status === 'waiting') {
        const ok = parks(c.i) && r.reason === 'yield' && (c.call === 'exec' || r.runId === c.runId);
        if (!ok) unexpected.push(`${where}: ${show(ex)}`);
      } else if (r.code === 'runtime_unavailable' && r.failurePhase === 'host') {
        // Redis unreachable (SPEC §2), or the cell not started within its budget (SPEC §3), or the
        // API missed the worker's pushed answer during the outage ("did not answer", same code).
        if (r.error === NO_ANSWER_ERROR) noAnswerFailures += 1;
        else if (!STORE_UNAVAILABLE_PATTERN.test(r.error) && !(c.call === 'exec' && r.error === NOT_STARTED_ERROR))
          unexpected.push(`${where}: ${show(ex)}`);
      } else {
        unexpected.push(`${where}: ${show(ex)}`);
      }
    }
    if (unexpected.length > 0 || process.env.CHAOS_DEBUG) {
      console.log(
        `redis-restart timeline (ms; Redis down ${restartBegan - t0}..${restartEnded - t0}):\n` +
          calls.map((c) => `${c.sentAt - t0}..${c.exchange.at - t0} ${c.call} #${c.i} ${c.runId ?? ''} ${show(c.exchange)}`).join('\n'),
      );
      // What the api and worker logged about those runs (at warn and above unless CHAOS_LOG_LEVEL says more).
      const runIds = calls.filter((c) => c.runId && unexpected.some((u) => u.includes(c.runId ?? ''))).map((c) => c.runId ?? '');
      const lines = stack
        .logs()
        .split('\n')
        .filter((line) => runIds.some((runId) => line.includes(runId)));
      if (lines.length > 0) console.log(`logs of the runs answered unexpectedly:\n${lines.join('\n')}`);
    }
    expect(unexpected).toEqual([]);

    // Every parked run the batch was told about was completed by a wait.
    const unfinished = [...parkedRunIds]
      .filter(
        ([, runId]) =>
          !(lastOf(runId)?.kind === 'answer' && (lastOf(runId) as { result: { status: string } }).result.status === 'completed'),
      )
      .map(
        ([i, runId]) =>
          `${i} ${runId}: ${calls
            .filter((c) => c.runId === runId)
            .map((c) => show(c.exchange))
            .join(' | ')}`,
      );
    expect(unfinished).toEqual([]);

    // ---- acknowledged before the restart → still readable (appendonly): event and run projection
    // At or before: the restart waits for the first acknowledgement and often begins in its millisecond.
    const acknowledged = calls.filter(
      (c) => c.exchange.kind === 'answer' && c.exchange.result.status === 'completed' && c.exchange.at <= restartBegan,
    );
    expect(acknowledged.length).toBeGreaterThan(0);
    const lostAcks: string[] = [];
    for (const c of acknowledged) {
      const completed = (sessions.get(sid(c.i)) ?? []).find(
        (e) => e.type === 'run.completed' && (c.runId === undefined || e.runId === c.runId),
      );
      const view = completed?.runId ? views.get(completed.runId) : undefined;
      const value = (completed?.data.result as { value?: unknown } | undefined)?.value;
      const viewValue = view?.lastResult?.status === 'completed' ? view.lastResult.value : undefined;
      if (!completed || value !== c.i || view?.status !== 'completed' || viewValue !== c.i) {
        lostAcks.push(`${c.call} #${c.i}: event ${JSON.stringify(completed ?? null)}, run ${JSON.stringify(view ?? null)}`);
      }
    }
    expect(lostAcks).toEqual([]);

    // ---- exactly one terminal event per run
    expect(multiTerminal).toEqual([]);
    expect(noTerminal).toEqual([]);

    const execs = calls.filter((c) => c.call === 'exec');
    const waits = calls.filter((c) => c.call === 'wait');
    const count = (list: Call[], pred: (r: Extract<Exchange, { kind: 'answer' }>['result']) => boolean): number =>
      list.filter((c) => c.exchange.kind === 'answer' && pred(c.exchange.result)).length;
    console.log(
      `redis-restart: ${count(execs, () => true)}/${execs.length} execs answered (${count(execs, (r) => r.status === 'completed')} completed, ` +
        `${count(execs, (r) => r.status === 'waiting')} waiting, ${count(execs, (r) => r.status === 'failed' && r.code === 'runtime_unavailable')} runtime_unavailable), ` +
        `${count(waits, () => true)}/${waits.length} waits answered (${count(waits, (r) => r.status === 'completed')} completed, ${count(waits, (r) => r.status === 'waiting')} waiting, ` +
        `${count(waits, (r) => r.status === 'failed' && r.code === 'runtime_unavailable')} runtime_unavailable); ` +
        `${noAnswerFailures} of the runtime_unavailable were "did not answer"; Redis down ${restartEnded - restartBegan} ms; ` +
        `${NEW_EXECS} new execs after restart completed; ${acknowledged.length} acknowledged runs still readable; ` +
        `${views.size} runs checked: ${multiTerminal.length} with >1 terminal event, ${noTerminal.length} without one; api and worker never restarted`,
    );
    // No log storm while Redis was down (SPEC §13): one line a second per cause at most.
    for (const app of [stack.api, ...stack.workers]) {
      const busiest = busiestLogSecond(app.logs());
      expect(busiest.lines <= 3 ? 'no storm' : busiest).toBe('no storm');
    }
  });
});
