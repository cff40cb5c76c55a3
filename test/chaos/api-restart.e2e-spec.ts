import type { CodeModeClient } from '@codemode/client';
import type { Event } from '@codemode/contracts';
import { Redis } from 'ioredis';
import { PrivateRedis } from '../utils/private-redis';
import { TestStack } from '../utils/test-stack';
import { answerDisagreement } from '../soak/answer-log-agreement';
import {
  allEvents,
  execPath,
  post,
  RUN_BEING_RESUMED_ERROR,
  endedRunError,
  show,
  sleep,
  terminalsByRun,
  waitPath,
  type Exchange,
} from './chaos-helpers';

jest.setTimeout(90_000);

const RUNS = 20;
const SESSIONS = 5;
const NEW_EXECS = 5;
/** The waits are opened over OPEN_SPREAD_MS; the API is killed KILL_AFTER_MS after the first. */
const OPEN_SPREAD_MS = 200;
const KILL_AFTER_MS = 120;
/** Bound for every run to reach its one terminal event after the new API is up. */
const SETTLE_MS = 30_000;

/**
 * A wait the killed API had reserved but not yet routed leaves a reservation nobody holds; the
 * next wait finds no resume job for it and releases it after a moment (WaitService.abandoned),
 * so no run is blocked until the reservation's lifetime (130 s) lapses.
 */

const sid = (i: number): string => `ar-${i % SESSIONS}`;
/** Parks, then after the wait sleeps a little (so the API dies mid-resume) and returns its index. */
const cellCode = (i: number): string =>
  `await yield_control("park ${i}"); await new Promise(r => setTimeout(r, ${300 + (i % 5) * 100})); return ${i};`;

/** SPEC §2: even runs are waited with an Idempotency-Key, and retried with the same key after the crash. */
const keyed = (i: number): boolean => i % 2 === 0;
const waitKey = (i: number): string => `ar-wait-${i}`;

/** Debugging aid (CHAOS_DEBUG=1): the run hashes and the keys of every queued resume job. */
async function redisState(url: string, prefix: string, runIds: string[]): Promise<string> {
  const redis = new Redis(url);
  try {
    const lines: string[] = [];
    for (const runId of runIds) {
      const [, keys] = await redis.scan('0', 'MATCH', `${prefix}:*:run:${runId}`, 'COUNT', 100000);
      for (const key of keys) lines.push(`${key} ${JSON.stringify(await redis.hgetall(key))}`);
    }
    const [, jobs] = await redis.scan('0', 'MATCH', `{${prefix}:worker-*`, 'COUNT', 100000);
    lines.push(`worker queue keys: ${jobs.sort().join(' ')}`);
    return lines.join('\n');
  } finally {
    redis.disconnect();
  }
}

describe('chaos: the API is killed (-9) while waits are open', () => {
  let redis: PrivateRedis;
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await TestStack.start({ workers: 1, redisUrl: redis.url });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.cleanup();
  });

  it('a new API on the same port finishes every run exactly once; no run is left stuck', async () => {
    // ---- park RUNS runs
    const runIds: string[] = [];
    const parked = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => post(client, execPath(sid(i)), { title: `park ${i}`, code: cellCode(i) })),
    );
    parked.forEach((ex, i) => {
      if (ex.kind !== 'answer' || ex.result.status !== 'waiting' || ex.result.reason !== 'yield')
        throw new Error(`run ${i} did not park: ${show(ex)}`);
      runIds[i] = ex.result.runId;
    });

    // ---- open a wait on each, and kill -9 the API while they are open
    const oldApi = stack.api;
    const sentAt: number[] = [];
    const openWaits = runIds.map(async (runId, i) => {
      await sleep((i * OPEN_SPREAD_MS) / RUNS);
      sentAt[i] = Date.now();
      return post(client, waitPath(sid(i)), { runId }, keyed(i) ? { idempotencyKey: waitKey(i) } : {});
    });
    await sleep(KILL_AFTER_MS);
    const killedAt = Date.now();
    await oldApi.kill();
    const during = await Promise.all(openWaits);
    const answeredBeforeKill = during.filter((ex) => ex.kind === 'answer');
    const openAtKill = sentAt.filter((t, i) => t < killedAt && !(during[i].kind === 'answer' && during[i].at < killedAt)).length;
    // Whatever came back before the kill is a SPEC answer (a wait that finished in time).
    for (const [i, ex] of during.entries()) {
      if (ex.kind === 'answer') expect([i, show(ex)]).toEqual([i, `completed ${i}`]);
      else expect([i, ex.kind]).toEqual([i, 'no_answer']);
    }

    // ---- a new API process on the same port and env answers
    const newApi = await stack.restartApi();
    expect(newApi.pid).not.toBe(oldApi.pid);
    expect(stack.workers.every((w) => w.alive)).toBe(true);
    expect((await client.raw('GET', '/health/ready')).status).toBe(200);

    // ---- each run: wait until it completes, or it answers "unavailable" because it already ended.
    // A keyed run is retried with its key: it gets the first wait's answer, never "ended" or "being resumed".
    type Outcome = { i: number; runId: string; answers: Exchange[]; final: 'completed' | 'ended' | 'stuck' | 'unexpected' };
    const until = Date.now() + SETTLE_MS;
    const outcomes: Outcome[] = await Promise.all(
      runIds.map(async (runId, i): Promise<Outcome> => {
        const answers: Exchange[] = [];
        for (;;) {
          const ex = await post(client, waitPath(sid(i)), { runId }, keyed(i) ? { idempotencyKey: waitKey(i) } : {});
          answers.push(ex);
          if (ex.kind !== 'answer') return { i, runId, answers, final: 'unexpected' };
          const r = ex.result;
          if (r.status === 'completed') return { i, runId, answers, final: r.value === i ? 'completed' : 'unexpected' };
          if (keyed(i)) return { i, runId, answers, final: 'unexpected' };
          if (r.status === 'failed' && r.error === endedRunError(sid(i), runId)) return { i, runId, answers, final: 'ended' };
          // `waiting` (the owner did not take this wait in time) or another wait's resume still
          // running (the killed API's): both say "ask again".
          const again = (r.status === 'waiting' && r.runId === runId) || (r.status === 'failed' && r.error === RUN_BEING_RESUMED_ERROR);
          if (!again) return { i, runId, answers, final: 'unexpected' };
          if (Date.now() > until) return { i, runId, answers, final: 'stuck' };
          await sleep(200);
        }
      }),
    );
    const describeOutcome = (o: Outcome): string => `run ${o.i} ${o.runId}: ${o.answers.map(show).join(' | ')}`;
    expect(outcomes.filter((o) => o.final === 'unexpected').map(describeOutcome)).toEqual([]);

    // ---- every run ends with exactly one terminal event (bounded), with its result
    const bySession = new Map<string, Event[]>();
    const readLogs = async (): Promise<void> => {
      for (let s = 0; s < SESSIONS; s += 1) bySession.set(`ar-${s}`, await allEvents(client, `ar-${s}`));
    };
    const terminalsOf = (i: number): Event[] => terminalsByRun(bySession.get(sid(i)) ?? []).get(runIds[i]) ?? [];
    await readLogs();
    while (runIds.some((_, i) => terminalsOf(i).length === 0) && Date.now() < until) {
      await sleep(250);
      await readLogs();
    }
    const badTerminals: string[] = [];
    const stuckRuns: string[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      const terminals = terminalsOf(i);
      const types = (bySession.get(sid(i)) ?? []).filter((e) => e.runId === runIds[i]).map((e) => e.type);
      const outcome = outcomes[i];
      if (terminals.length === 0) {
        const view = await client.getRun(sid(i), runIds[i]);
        const answers = outcome.answers
          .map(show)
          .join(' | ')
          .replace(/( \| failed invalid_input code mode run is already being resumed\.)+/, ' | … (same)');
        stuckRuns.push(
          `run ${i} ${runIds[i]}: ${outcome.answers.length} waits: ${answers}; run status ${view.status}; events ${types.join(', ')}`,
        );
        continue;
      }
      const result = terminals[0].data.result as { status?: string; value?: unknown } | undefined;
      const ok = terminals.length === 1 && terminals[0].type === 'run.completed' && result?.status === 'completed' && result.value === i;
      if (!ok)
        badTerminals.push(`run ${i} ${runIds[i]}: events ${types.join(', ')}; terminal ${JSON.stringify(terminals.map((e) => e.data))}`);
      // "unavailable or expired" only for a run that had already ended.
      if (outcome.final === 'ended' && terminals.length !== 1)
        badTerminals.push(`run ${i}: answered unavailable but has ${terminals.length} terminal events`);
      if (outcome.final === 'stuck')
        badTerminals.push(`run ${i}: ended, but its waits never said so: ${outcome.answers.map(show).join(' | ')}`);
    }
    expect(badTerminals).toEqual([]);
    // SPEC §17: every answer, before the kill and after, agrees with the run's terminal events.
    const disagreements = [
      ...during.map((ex, i) => [i, ex] as const),
      ...outcomes.flatMap((o) => o.answers.map((ex) => [o.i, ex] as const)),
    ]
      .map(([i, ex]) => [i, ex.kind === 'answer' ? answerDisagreement(ex.result, terminalsOf(i)) : null] as const)
      .filter(([, why]) => why !== null);
    expect(disagreements).toEqual([]);
    if (stuckRuns.length > 0 && process.env.CHAOS_DEBUG) console.log(await redisState(redis.url, stack.prefix, runIds));
    // The keyed runs' first retry already had the answer: the same one a second repeat gets.
    const keyedAnswers = runIds.filter((_, i) => keyed(i)).map((runId, k) => outcomes[k * 2].answers.map(show));
    expect(keyedAnswers).toEqual(runIds.filter((_, i) => keyed(i)).map((_, k) => [`completed ${k * 2}`]));
    const repeats = await Promise.all(
      runIds
        .filter((_, i) => keyed(i))
        .map((runId, k) => post(client, waitPath(sid(k * 2)), { runId }, { idempotencyKey: waitKey(k * 2) })),
    );
    expect(repeats.map(show)).toEqual(runIds.filter((_, i) => keyed(i)).map((_, k) => `completed ${k * 2}`));
    expect(stuckRuns).toEqual([]);

    // ---- new execs work on the new API
    const fresh = await Promise.all(
      Array.from({ length: NEW_EXECS }, (_, k) => post(client, execPath(`ar-new-${k}`), { title: `new ${k}`, code: `return ${k} * 2;` })),
    );
    expect(fresh.map(show)).toEqual(Array.from({ length: NEW_EXECS }, (_, k) => `completed ${k * 2}`));

    const count = (final: Outcome['final']): number => outcomes.filter((o) => o.final === final).length;
    const resumedBeforeKill = runIds.filter((runId, i) =>
      (bySession.get(sid(i)) ?? []).some((e) => e.runId === runId && e.type === 'run.resumed' && Date.parse(e.at) <= killedAt),
    ).length;
    console.log(
      `api-restart: ${RUNS} runs parked; ${openAtKill} waits open at kill -9 (cut off), ${answeredBeforeKill.length} answered before it, ` +
        `${RUNS - openAtKill - answeredBeforeKill.length} sent after it (refused); ` +
        `new API pid ${newApi.pid} on the same port; new waits: ${count('completed')} completed, ${count('ended')} "unavailable or expired" (already ended), ` +
        `${count('stuck')} still blocked after ${SETTLE_MS} ms; ${outcomes.reduce((n, o) => n + o.answers.length, 0)} waits sent after restart; ` +
        `${resumedBeforeKill} runs resumed before the kill; ${RUNS - stuckRuns.length} runs with exactly one terminal event (run.completed with its value), ` +
        `${stuckRuns.length} stuck; ${NEW_EXECS} new execs completed; ${keyedAnswers.length} keyed runs answered their first wait's result on the first retry`,
    );
  });
});
