import type { CodeModeClient } from '@codemode/client';
import type { Event } from '@codemode/contracts';
import { PrivateRedis } from '../utils/private-redis';
import { TestStack } from '../utils/test-stack';
import {
  allEvents,
  endedRunError,
  execPath,
  NO_ANSWER_ERROR,
  NOT_STARTED_ERROR,
  post,
  RUN_BEING_RESUMED_ERROR,
  show,
  sleep,
  STORE_UNAVAILABLE_PATTERN,
  terminalsByRun,
  waitPath,
  type Exchange,
} from './chaos-helpers';

jest.setTimeout(120_000);

const EXECS = 24;
const STAGGER_MS = 100;
/** Redis is paused after PAUSE_AFTER execs, for longer than the clients' 5 s command timeout. */
const PAUSE_AFTER = 8;
const PAUSE_MS = 6000;
const LEASE_MS = 2000;
const TIMEOUT_MS = 4000;
/** Every run ends within its answer's deadline plus a lease and a sweep; with a margin. */
const SETTLE_MS = 30_000;

const sid = (i: number): string => `rp-${i}`;
const parks = (i: number): boolean => i % 4 === 0;
/** The exec answer that says the cell never ran (so its run, if recorded, must never have started). */
/** A restored run whose in-flight call was neither settled in the log nor replay-safe (SPEC §12). */
const LOST_CALL = 'code mode run lost a pending tool call when its worker stopped; start a new run.';
const NOT_RUN = 'code mode store is unavailable (Redis did not answer); the cell was not run. Retry in a few seconds.';

function cellCode(i: number): string {
  if (parks(i)) return `await yield_control("p"); return ${i};`;
  // A store write: its commit must land once, even when it is retried across the pause.
  return `await new Promise(r => setTimeout(r, 150)); store("k", ${i}); return ${i};`;
}

/**
 * SPEC §2 "a command that timed out may still have run", on a Redis of its own: Redis is
 * paused (SIGSTOP) past the clients' command timeout while execs are requested, claimed,
 * committed and parked, then resumes and runs everything it received meanwhile. Every call gets a
 * contract answer; a cell said not to have run never started; no run has two `run.started` or two
 * `store.committed`; every run has exactly one terminal event within its deadline plus a lease,
 * and a completed answer is the log's.
 */
describe('chaos: Redis paused (SIGSTOP) past the command timeout mid-load', () => {
  let redis: PrivateRedis;
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await TestStack.start({
      workers: 1,
      redisUrl: redis.url,
      env: { CODEMODE_LEASE_MS: String(LEASE_MS), CODEMODE_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
    client = stack.client();
    expect(show(await post(client, execPath('rp-warm'), { title: 'warm', code: cellCode(1) }))).toBe('completed 1');
  });
  afterAll(async () => {
    redis?.resume();
    await stack?.stop();
    await redis?.cleanup();
  });

  it('answers every call, leaves no half-write, and ends every run once as its answer says', async () => {
    const execs: Exchange[] = [];
    const parkedIds = new Map<number, string>();
    const t0 = Date.now();
    const pause = (async () => {
      await sleep(PAUSE_AFTER * STAGGER_MS);
      redis.pause();
      await sleep(PAUSE_MS);
      redis.resume();
    })();
    await Promise.all([
      pause,
      ...Array.from({ length: EXECS }, async (_, i) => {
        await sleep(i * STAGGER_MS);
        const ex = await post(client, execPath(sid(i)), { title: `cell ${i}`, code: cellCode(i) });
        execs[i] = ex;
        if (ex.kind === 'answer' && ex.result.status === 'waiting') parkedIds.set(i, ex.result.runId);
      }),
    ]);
    const resumedAt = Date.now();

    // ---- parked runs are waited until they settle (Redis is back)
    const waits = new Map<number, Exchange[]>();
    await Promise.all(
      [...parkedIds].map(async ([i, runId]) => {
        const answers: Exchange[] = [];
        waits.set(i, answers);
        const until = Date.now() + SETTLE_MS;
        for (;;) {
          const ex = await post(client, waitPath(sid(i)), { runId });
          answers.push(ex);
          // "did not answer … read GET" reports no outcome (SPEC §17): the leg may still be ending
          // (a wait is refused as "being resumed" meanwhile); ask again.
          const r = ex.kind === 'answer' ? ex.result : undefined;
          const settled =
            r?.status === 'completed' || (r?.status === 'failed' && r.error !== NO_ANSWER_ERROR && r.error !== RUN_BEING_RESUMED_ERROR);
          if (settled || Date.now() > until) return;
          await sleep(300);
        }
      }),
    );

    // ---- every exec answer is one the contract allows
    const unexpected: string[] = [];
    for (const [i, ex] of execs.entries()) {
      if (ex.kind !== 'answer') {
        unexpected.push(`exec ${i}: ${show(ex)}`);
        continue;
      }
      const r = ex.result;
      if (r.status === 'completed' && r.value === i && !parks(i)) continue;
      // A cell whose budget ended while a host call waited on Redis parks with it pending (SPEC §3).
      if (r.status === 'waiting' && (parks(i) || r.reason === 'pending_tools')) continue;
      if (r.status === 'failed' && r.code === 'runtime_unavailable' && r.failurePhase === 'host') {
        if (r.error === NO_ANSWER_ERROR || r.error === NOT_STARTED_ERROR || STORE_UNAVAILABLE_PATTERN.test(r.error)) continue;
      }
      unexpected.push(`exec ${i}: ${show(ex)}`);
    }
    for (const [i, answers] of waits) {
      const last = answers.at(-1);
      const r = last?.kind === 'answer' ? last.result : undefined;
      if (r?.status === 'completed' && r.value === i) continue;
      // A host call of its leg met the outage: the run stopped, and says why in the store's words.
      if (r?.status === 'failed' && r.code === 'runtime_unavailable' && (STORE_UNAVAILABLE_PATTERN.test(r.error) || r.error === LOST_CALL))
        continue;
      // Its worker's lease lapsed in the pause (PAUSE_MS is three leases) and a wait came before the
      // worker renewed it: a run that is not replay-safe and has no image is lost then (SPEC §6), and
      // the wait says it ended: the log's one terminal event (checked below) is its outcome.
      if (r?.status === 'failed' && r.error === endedRunError(sid(i), parkedIds.get(i)!)) continue;
      unexpected.push(`wait ${i}: ${answers.map(show).join(' | ')}`);
    }
    expect(unexpected).toEqual([]);

    // ---- the log: one terminal event per run (bounded), no double start or commit, answers agree
    const until = resumedAt + SETTLE_MS;
    let logs = new Map<number, Event[]>();
    const read = async (): Promise<void> => {
      const entries = await Promise.all(
        Array.from({ length: EXECS }, async (_, i) => {
          const res = await client.raw('GET', `/v1/sessions/${sid(i)}/events?limit=1`);
          return [i, res.status === 404 ? [] : await allEvents(client, sid(i))] as const;
        }),
      );
      logs = new Map(entries);
    };
    const unended = (): string[] =>
      [...logs].flatMap(([i, events]) => [...terminalsByRun(events)].filter(([, t]) => t.length === 0).map(([runId]) => `${i} ${runId}`));
    await read();
    // A run that parked while its exec's answer was lost (the exec said "did not answer … read GET")
    // is parked, not stuck: it waits for a wait (or its expiry). Waited here by its runId from the log.
    for (const [i, events] of logs) {
      const last = events.at(-1);
      if (last?.type !== 'run.parked' || !last.runId || parkedIds.has(i)) continue;
      const answer = await post(client, waitPath(sid(i)), { runId: last.runId });
      const r = answer.kind === 'answer' ? answer.result : undefined;
      const ok = (r?.status === 'completed' && r.value === i) || (r?.status === 'failed' && r.code === 'runtime_unavailable');
      if (!ok) unexpected.push(`wait ${i} (runId from the log): ${show(answer)}`);
    }
    expect(unexpected).toEqual([]);
    while (unended().length > 0 && Date.now() < until) {
      await sleep(500);
      await read();
    }
    const problems: string[] = [];
    for (const [i, events] of logs) {
      const count = (type: string): number => events.filter((e) => e.type === type).length;
      const types = events.map((e) => e.type).join(', ');
      const runs = terminalsByRun(events);
      if (runs.size > 1) problems.push(`${sid(i)}: ${runs.size} runs for one exec: ${types}`);
      for (const [runId, terminals] of runs) {
        if (terminals.length !== 1) problems.push(`${sid(i)} ${runId}: ${terminals.length} terminal events: ${types}`);
      }
      if (count('run.started') > 1 || count('store.committed') > 1 || count('run.parked') > 1)
        problems.push(`${sid(i)}: half-write retried twice: ${types}`);
      const ex = execs[i];
      const answer = ex?.kind === 'answer' ? ex.result : undefined;
      const completed = events.find((e) => e.type === 'run.completed');
      if (answer?.status === 'completed' && (completed?.data.result as { value?: unknown } | undefined)?.value !== i)
        problems.push(`${sid(i)}: answered completed ${i} but the log says ${types}`);
      if (answer?.status === 'failed' && answer.error === NOT_RUN && count('run.started') > 0)
        problems.push(`${sid(i)}: answered "the cell was not run" but it started: ${types}`);
      if (completed && !parks(i) && count('store.committed') !== 1)
        problems.push(`${sid(i)}: completed without its one store commit: ${types}`);
    }
    if (problems.length > 0 || process.env.CHAOS_DEBUG) {
      console.log(
        `redis-pause timeline (ms from start; Redis paused ${PAUSE_AFTER * STAGGER_MS}..${PAUSE_AFTER * STAGGER_MS + PAUSE_MS}):\n` +
          execs
            .map((ex, i) => {
              const waited = (waits.get(i) ?? []).map((w) => `${show(w)} @${w.at - t0}`).join(' | ');
              return `exec ${i}: ${show(ex)} @${ex.at - t0}; waits ${waited || 'none'}; log ${(logs.get(i) ?? []).map((e) => e.type).join(', ')}`;
            })
            .join('\n'),
      );
    }
    expect(unended()).toEqual([]);
    expect(problems).toEqual([]);

    // ---- the same processes serve new work
    const fresh = await Promise.all(
      Array.from({ length: 4 }, (_, k) => post(client, execPath(`rp-new-${k}`), { title: 'new', code: `return ${k}` })),
    );
    expect(fresh.map(show)).toEqual(['completed 0', 'completed 1', 'completed 2', 'completed 3']);
    expect([stack.api.alive, ...stack.workers.map((w) => w.alive)]).toEqual([true, true]);
    const answered = (pred: (ex: Exchange) => boolean): number => execs.filter(pred).length;
    console.log(
      `redis-pause: ${EXECS} execs, Redis paused ${PAUSE_MS} ms: ${answered((ex) => ex.kind === 'answer' && ex.result.status === 'completed')} completed, ` +
        `${answered((ex) => ex.kind === 'answer' && ex.result.status === 'waiting')} parked, ` +
        `${answered((ex) => ex.kind === 'answer' && ex.result.status === 'failed')} runtime_unavailable; ${parkedIds.size} parked runs settled by wait; ` +
        `${[...logs.values()].filter((e) => e.length > 0).length} runs logged, each with one terminal event, no double start, commit or park`,
    );
  });
});
