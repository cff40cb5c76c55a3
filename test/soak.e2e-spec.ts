import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { CodeModeClient } from '@codemode/client';
import type { Event } from '@codemode/contracts';
import { allEvents, RUN_BEING_RESUMED_ERROR, show, sleep, terminalsByRun, type Exchange } from './chaos/chaos-helpers';
import { inLanes } from './fuzz/fuzz-driver';
import { answerDisagreement } from './soak/answer-log-agreement';
import { RssSampler, type SampledProcess } from './soak/rss-sampler';
import { driveRun, expectedValue, soakPlan, type SoakPlan } from './soak/soak-runs';
import { TestStack } from './utils/test-stack';

/**
 * SPEC §17 "Soak and fuzz": mixed runs (exec, park/wait, tool calls, shell, aborts) on two
 * workers, one of them SIGKILLed midway and replaced. Every run ends with one terminal event,
 * every answer agrees with the log, and no service process grows more than 256 MiB of RSS from
 * the first to the last tenth of the runs (the replacement worker from a warm worker's first
 * tenth: `RssSampler`). `SOAK_RUNS` sizes it (the short form here, `npm run
 * soak` the full 10,000); `SOAK_SEED` replays a mix.
 */
const SEED = Number(process.env.SOAK_SEED ?? 20261204);
const RUNS = Number(process.env.SOAK_RUNS ?? 400);
const LANES = 8;
const KILL_AT = Math.floor(RUNS / 2);
const WINDOW = Math.max(1, Math.round(RUNS / 10));
const SAMPLE_EVERY = Math.max(1, Math.round(RUNS / 200));
const RSS_LIMIT_MIB = 256;
const LEASE_MS = 1500;
/** Bound for a run the soak drove to reach its terminal event once the driving is done. */
const SETTLE_MS = 30_000;

jest.setTimeout(Math.max(600_000, RUNS * 300));

const sid = (i: number): string => `soak-${i}`;

describe(`soak (seed ${SEED}, ${RUNS} runs; replay with SOAK_SEED=${SEED} SOAK_RUNS=${RUNS})`, () => {
  let stack: TestStack;
  let client: CodeModeClient;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 2, env: { CODEMODE_LEASE_MS: String(LEASE_MS), CODEMODE_TIMEOUT_MS: '10000' } });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('ends every run once, as its answers say, through a worker SIGKILL, without the services growing', async () => {
    const plans: SoakPlan[] = fc.sample(soakPlan, { seed: SEED, numRuns: RUNS });
    const exchanges: Exchange[][] = new Array<Exchange[]>(RUNS);
    const rss = new RssSampler();
    const processes = (): SampledProcess[] => [
      { name: 'api', kind: 'api', pid: stack.api.pid },
      ...stack.workers.filter((w) => w.alive).map((w) => ({ name: `worker ${w.pid}`, kind: 'worker', pid: w.pid })),
    ];
    const victim = stack.workers[0];
    const started = Date.now();
    let done = 0;
    await inLanes(plans, LANES, async (plan, i) => {
      if (i === KILL_AT) {
        await victim.kill();
        await stack.addWorker();
      }
      exchanges[i] = await driveRun(client, sid(i), plan);
      done += 1;
      if (done % SAMPLE_EVERY === 0) rss.sample(processes(), done);
    });
    const drivenMs = Date.now() - started;

    // ---- the log of every session, read again until every run in it has ended (bounded)
    const logs = new Array<Event[]>(RUNS);
    const read = (i: number): Promise<void> =>
      allEvents(client, sid(i)).then(
        (events) => void (logs[i] = events),
        () => void (logs[i] = []),
      );
    const unended = (): number[] =>
      plans.flatMap((_, i) => ([...terminalsByRun(logs[i] ?? []).values()].some((t) => t.length === 0) ? [i] : []));
    await inLanes(plans, LANES, async (_, i) => read(i));
    const until = Date.now() + SETTLE_MS;
    while (unended().length > 0 && Date.now() < until) {
      await sleep(500);
      await Promise.all(unended().map(read));
    }

    // ---- every run: one terminal event; every answer: in the contract and agreeing with the log
    const problems: string[] = [];
    const outcomes: Record<string, number> = {};
    for (const [i, plan] of plans.entries()) {
      const runs = terminalsByRun(logs[i]);
      const where = `${sid(i)} ${plan.kind} (${exchanges[i].map(show).join(' | ')})`;
      if (runs.size > 1) problems.push(`${where}: ${runs.size} runs for one exec`);
      for (const [runId, terminals] of runs) {
        if (terminals.length !== 1)
          problems.push(
            `${where}: run ${runId} has ${terminals.length} terminal events: ${logs[i].map((e) => `${e.type} ${JSON.stringify(e.data).slice(0, 160)}`).join(', ')}`,
          );
      }
      const terminals = runs.size === 1 ? [...runs.values()][0] : undefined;
      for (const ex of exchanges[i]) {
        if (ex.kind !== 'answer') {
          // A 409 on the abort: the run had already ended (its worker died and it was taken over).
          if (!(plan.kind === 'abort' && ex.kind === 'http_error' && ex.status === 409)) problems.push(`${where}: ${show(ex)}`);
          continue;
        }
        const disagreement = answerDisagreement(ex.result, terminals);
        if (disagreement) problems.push(`${where}: ${disagreement}`);
        if (ex.result.status === 'completed' && !isDeepStrictEqual(ex.result.value, expectedValue(plan)))
          problems.push(
            `${where}: completed with ${JSON.stringify(ex.result.value)}, the cell returns ${JSON.stringify(expectedValue(plan))}`,
          );
      }
      const last = exchanges[i].at(-1);
      // "Being resumed" says ask again, no outcome: a run that ended while its waits still said so never told its caller.
      if (
        terminals?.length === 1 &&
        last?.kind === 'answer' &&
        last.result.status === 'failed' &&
        last.result.error === RUN_BEING_RESUMED_ERROR
      )
        problems.push(`${where}: ended, but its last wait still said it is being resumed`);
      const outcome = `${plan.kind} ${last?.kind === 'answer' ? (last.result.status === 'failed' ? `failed ${last.result.code ?? '-'}` : last.result.status) : last?.kind}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }

    const growth = rss.growth(WINDOW);
    process.stdout.write(
      `soak seed ${SEED}: ${RUNS} runs in ${drivenMs} ms (${Math.round((RUNS * 1000) / drivenMs)} runs/s, ${LANES} lanes), ` +
        `worker ${victim.pid} SIGKILLed at run ${KILL_AT}; outcomes ${JSON.stringify(outcomes)}; ` +
        `RSS first→last ${WINDOW} runs: ${growth.map((g) => `${g.process} ${g.firstMiB}→${g.lastMiB} MiB`).join(', ')}\n`,
    );
    expect(problems.slice(0, 20)).toEqual([]);
    expect(unended().map(sid)).toEqual([]);
    expect(growth.filter((g) => g.growthMiB > RSS_LIMIT_MIB)).toEqual([]);
    expect(growth.some((g) => g.process === 'api')).toBe(true);
    expect([stack.api.alive, ...stack.workers.map((w) => w.alive)]).toEqual([true, false, true, true]);
  });
});
