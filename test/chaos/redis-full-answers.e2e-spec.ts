import { Redis } from 'ioredis';
import type { CodeModeClient } from '@codemode/client';
import type { Event } from '@codemode/contracts';
import { PrivateRedis } from '../utils/private-redis';
import { TestStack } from '../utils/test-stack';
import { answerDisagreement } from '../soak/answer-log-agreement';
import {
  allEvents,
  execPath,
  fillRedis,
  NO_ANSWER_ERROR,
  post,
  RUN_BEING_RESUMED_ERROR,
  RUN_UNAVAILABLE_ERROR,
  show,
  sleep,
  terminalsByRun,
  waitPath,
  type Exchange,
} from './chaos-helpers';

jest.setTimeout(120_000);

/** A cell's budget and the reply grace: a call's answer is due this long after its leg started. */
const TIMEOUT_MS = 2500;
const GRACE_MS = 500;
/** Redis stays full past every answer's deadline: the calls in flight give up while it is full. */
const FULL_MS = TIMEOUT_MS + GRACE_MS + 2000;
/**
 * Longer than Redis stays full: a queue job's lock is renewed by a write Redis refuses at
 * `maxmemory`, so a lease shorter than the fault would have live runs taken for stalled
 * (a liveness question of its own, not the one asked here).
 */
const LEASE_MS = 20_000;
/** How long a cell runs before its store write and its end (both refused while Redis is full). */
const CELL_MS = 1800;
const EXECS = 6;
const PARKED = 4;
/** After memory is freed: every run ends (the worker writes what Redis refused), with a margin. */
const SETTLE_MS = 30_000;

const execSid = (i: number): string => `fa-exec-${i}`;
const parkSid = (j: number): string => `fa-park-${j}`;
/** Half the runs are restartSafe: a leg that does not answer in time owes its answer to the next wait (SPEC §16). */
const restartSafe = (i: number): boolean => i % 2 === 0;
/** A restartSafe cell cannot write the store (not replay-safe): it only ends late; the others also commit a store write. */
const storeWrite = (i: number): string => (restartSafe(i) ? '' : `store("k", "v".repeat(4000)); `);
const execCode = (i: number): string => `await new Promise(r => setTimeout(r, ${CELL_MS})); ${storeWrite(i)}return ${i};`;
const parkCode = (j: number): string =>
  `await yield_control("p"); await new Promise(r => setTimeout(r, ${CELL_MS})); ${storeWrite(j)}return ${100 + j};`;

/** One answer of a call on one run, for the comparison with the log. */
interface Answered {
  call: string;
  sid: string;
  runId: string | null;
  exchange: Exchange;
}

/**
 * SPEC §17 "Answers agree with the log", under a full Redis (SPEC §2: `maxmemory`, `noeviction`,
 * on a Redis of its own): execs whose cells commit store writes and waits on parked runs whose
 * legs do are in flight when Redis fills up, and it stays full past every call's deadline, so
 * their ends and commits are refused and written only once memory is freed. Every answer agrees
 * with the log: a `completed` has the log's `run.completed` value; any other `failed` than the
 * "did not answer … read GET" text has no `run.completed` and no `store.committed` in its run
 * (the "store is full" answer is for calls that ran nothing) and, if its run ended, the same error.
 */
describe('chaos: every exec and wait answer agrees with the log while Redis is full', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    admin = new Redis(redis.url);
    stack = await TestStack.start({
      redisUrl: redis.url,
      env: { CODEMODE_TIMEOUT_MS: String(TIMEOUT_MS), CODEMODE_REPLY_GRACE_MS: String(GRACE_MS), CODEMODE_LEASE_MS: String(LEASE_MS) },
    });
    client = stack.client();
  });
  afterAll(async () => {
    await admin?.config('SET', 'maxmemory', '0').catch(() => undefined);
    await stack?.stop();
    admin?.disconnect();
    await redis?.cleanup();
  });

  /** True once every session's log shows its leg running (`run.started` for execs, `run.resumed` for waits). */
  async function legsRunning(): Promise<boolean> {
    const started = await Promise.all([
      ...Array.from({ length: EXECS }, (_, i) => logOf(execSid(i)).then((log) => log.some((e) => e.type === 'run.started'))),
      ...Array.from({ length: PARKED }, (_, j) => logOf(parkSid(j)).then((log) => log.some((e) => e.type === 'run.resumed'))),
    ]);
    return started.every(Boolean);
  }

  async function logOf(sid: string): Promise<Event[]> {
    const res = await client.raw('GET', `/v1/sessions/${sid}/events?limit=1`);
    return res.status === 404 ? [] : allEvents(client, sid);
  }

  it('answers no call "failed" while the log says its run committed and completed', async () => {
    const parkedIds: string[] = [];
    for (let j = 0; j < PARKED; j += 1) {
      const parked = await post(client, execPath(parkSid(j)), { title: `park ${j}`, code: parkCode(j), restartSafe: restartSafe(j) });
      expect(show(parked)).toMatch(/^waiting yield cm_/);
      parkedIds.push(parked.kind === 'answer' && parked.result.status === 'waiting' ? parked.result.runId : '');
    }
    // One more parked run, waited only while Redis is full: that wait runs nothing.
    const spare = await post(client, execPath('fa-spare'), { title: 'spare', code: parkCode(9) });
    const spareId = spare.kind === 'answer' && spare.result.status === 'waiting' ? spare.result.runId : '';

    const answers: Answered[] = [];
    const inFlight = [
      ...Array.from({ length: EXECS }, async (_, i) => {
        const exchange = await post(client, execPath(execSid(i)), { title: `exec ${i}`, code: execCode(i), restartSafe: restartSafe(i) });
        answers.push({ call: `exec ${i}`, sid: execSid(i), runId: null, exchange });
      }),
      ...parkedIds.map(async (runId, j) => {
        const exchange = await post(client, waitPath(parkSid(j)), { runId });
        answers.push({ call: `wait ${j}`, sid: parkSid(j), runId, exchange });
      }),
    ];
    // Full once every leg runs, well before its store write and its end.
    const until = Date.now() + 10_000;
    while (!(await legsRunning()) && Date.now() < until) await sleep(50);
    expect(await legsRunning()).toBe(true);
    await fillRedis(admin);
    const fullAt = Date.now();
    // Calls that arrive while it is full run nothing: they say the store is full.
    const refused = [
      post(client, execPath('fa-refused'), { title: 'refused', code: 'return 1' }).then((exchange) =>
        answers.push({ call: 'exec refused', sid: 'fa-refused', runId: null, exchange }),
      ),
      post(client, waitPath('fa-spare'), { runId: spareId }).then((exchange) =>
        answers.push({ call: 'wait spare', sid: 'fa-spare', runId: spareId, exchange }),
      ),
    ];
    await Promise.all(refused);
    await sleep(Math.max(0, FULL_MS - (Date.now() - fullAt)));
    const answeredWhileFull = answers.length;
    await admin.config('SET', 'maxmemory', '0');
    await Promise.all(inFlight);

    // ---- a call that answered without an outcome (or waiting: owed) is waited until it settles
    const settleBy = Date.now() + SETTLE_MS;
    const runIdOf = async (sid: string): Promise<string | null> =>
      (await logOf(sid)).find((e) => e.type === 'run.requested')?.runId ?? null;
    for (const first of [...answers]) {
      const r = first.exchange.kind === 'answer' ? first.exchange.result : null;
      const unsettled = r?.status === 'waiting' || (r?.status === 'failed' && r.error === NO_ANSWER_ERROR);
      if (!unsettled || first.sid === 'fa-spare') continue;
      const runId = first.runId ?? (r?.status === 'waiting' ? r.runId : await runIdOf(first.sid));
      for (;;) {
        const exchange = await post(client, waitPath(first.sid), { runId });
        const result = exchange.kind === 'answer' ? exchange.result : null;
        // Still recording its end (Redis just freed): a wait is refused as on any running leg, and asks again.
        const running = result?.status === 'failed' && result.error === RUN_BEING_RESUMED_ERROR;
        if (!running) answers.push({ call: `${first.call} (then wait)`, sid: first.sid, runId, exchange });
        if ((result && result.status !== 'waiting' && !running) || Date.now() > settleBy) break;
        await sleep(300);
      }
    }

    // ---- every run ends once; every answer agrees with the log
    const sids = [...new Set(answers.map((a) => a.sid))];
    let logs = new Map<string, Event[]>();
    const read = async (): Promise<void> => {
      logs = new Map(await Promise.all(sids.map(async (sid) => [sid, await logOf(sid)] as const)));
    };
    const unended = (): string[] =>
      [...logs].flatMap(([sid, events]) =>
        [...terminalsByRun(events)]
          .filter(([runId, ends]) => ends.length === 0 && runId !== spareId)
          .map(([runId]) => `${sid} ${runId}: ${events.map((e) => e.type).join(', ')}`),
      );
    await read();
    while (unended().length > 0 && Date.now() < settleBy) {
      await sleep(500);
      await read();
    }
    expect(unended()).toEqual([]);

    const disagreements: string[] = [];
    for (const { call, sid, runId: known, exchange } of answers) {
      if (exchange.kind !== 'answer') {
        disagreements.push(`${call}: ${show(exchange)}`);
        continue;
      }
      const r = exchange.result;
      const events = logs.get(sid) ?? [];
      const runId = known ?? events.find((e) => e.type === 'run.requested')?.runId ?? null;
      const ofRun = events.filter((e) => runId !== null && e.runId === runId);
      const types = ofRun.map((e) => e.type).join(', ');
      // A wait on a run that ended names where its outcome is read (SPEC §3): it reports none.
      if (r.status === 'failed' && r.error.startsWith(RUN_UNAVAILABLE_ERROR) && r.error.includes('GET /v1/sessions/')) continue;
      if (
        r.status === 'failed' &&
        r.error !== NO_ANSWER_ERROR &&
        ofRun.some((e) => e.type === 'run.completed' || e.type === 'store.committed')
      )
        disagreements.push(`${call}: answered ${show(exchange)}, the log says ${types}`);
      const ends = runId === null ? undefined : terminalsByRun(events).get(runId);
      const why = answerDisagreement(r, ends && ends.length > 0 ? ends : undefined);
      if (why) disagreements.push(`${call}: ${show(exchange)}: ${why} (${types})`);
    }
    if (disagreements.length > 0 || process.env.CHAOS_DEBUG) {
      console.log(
        `redis-full answers (full for ${FULL_MS} ms):\n` +
          answers.map((a) => `${a.call}: ${show(a.exchange)}; log ${(logs.get(a.sid) ?? []).map((e) => e.type).join(', ')}`).join('\n'),
      );
      if (process.env.CHAOS_DEBUG)
        console.log(`api:\n${stack.api.logs().slice(-20000)}\nworker:\n${stack.workers[0].logs().slice(-30000)}`);
    }
    expect(disagreements).toEqual([]);

    // The calls made while Redis was full ran nothing and say so; the run they named is untouched.
    const whileFull = answers.slice(0, answeredWhileFull).filter((a) => a.call === 'exec refused' || a.call === 'wait spare');
    expect(whileFull.map((a) => show(a.exchange))).toEqual([
      'failed runtime_unavailable code mode store is full (Redis refused the write for memory); retry later or ask the operator to free memory.',
      'failed runtime_unavailable code mode store is full (Redis refused the write for memory); retry later or ask the operator to free memory.',
    ]);
    expect(logs.get('fa-spare')?.at(-1)?.type).toBe('run.parked');
    // Every cell that ran committed its store write once and completed, whatever its call answered.
    const cells = [
      ...Array.from({ length: EXECS }, (_, i) => ({ sid: execSid(i), commits: restartSafe(i) ? 0 : 1 })),
      ...Array.from({ length: PARKED }, (_, j) => ({ sid: parkSid(j), commits: restartSafe(j) ? 0 : 1 })),
    ];
    const ended = cells.map(({ sid }) => {
      const types = (logs.get(sid) ?? []).map((e) => e.type);
      return { sid, commits: types.filter((t) => t === 'store.committed').length, end: types.filter((t) => t.startsWith('run.')).at(-1) };
    });
    expect(ended).toEqual(cells.map(({ sid, commits }) => ({ sid, commits, end: 'run.completed' })));
    expect(stack.workers[0].logs()).toContain('Redis unavailable or full; recording the run outcome again');
  });
});
