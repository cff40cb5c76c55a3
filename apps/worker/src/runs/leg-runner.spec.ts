import { SPEC_DEFAULT_LIMITS, type AppConfig } from '@codemode/config';
import type { CellSpec, CodeModeOutput } from '@codemode/contracts';
import { TIMEOUT_MESSAGE, type CellOutcome, type WaitingOutcome } from '@codemode/cells';
import type { RedisClient } from '@codemode/events';
import type { CellRunRequest, RestorePlan, ResumeOptions, SandboxPool } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import type { RunToolHost } from '../tools/run-tool-host';
import { LegRunner, type Leg } from './leg-runner.service';
import type { RunOutcomes } from './run-outcomes.service';
import type { RunningLegs } from './running-legs.service';
import { WorkerRun } from './worker-run';

/** No index of running legs (RunningLegs has its own int-spec): takes the leg as asked. */
const notIndexed = {
  beside: <T>(_run: unknown, _replyTo: string, take: () => Promise<T>) => take(),
  ended: () => undefined,
} as unknown as RunningLegs;

const line = (text: string): CodeModeOutput => ({ type: 'text', text });
const completed = (text: string): CellOutcome => ({
  status: 'completed',
  valueJson: '1',
  output: [line(text)],
  consoleTruncated: false,
  bridgeDispatchStarted: true,
});
const waiting = (text: string): WaitingOutcome => ({
  status: 'waiting',
  reason: 'pending_tools',
  pending: [],
  snapshotBytes: 1,
  memoryBytes: 1,
  output: [line(text)],
  consoleTruncated: false,
  bridgeDispatchStarted: true,
});

/** The pool as the leg runner drives it: each method notes its call and answers the next queued outcome (a throw when it is an Error). */
class FakePool {
  readonly calls: { method: string; args: unknown[] }[] = [];
  answers: (CellOutcome | Error)[] = [];

  run(request: CellRunRequest, host: unknown, tenant: string): Promise<CellOutcome> {
    return this.answer('run', request, host, tenant);
  }
  resume(runId: string, options: ResumeOptions, host: unknown): Promise<CellOutcome> {
    return this.answer('resume', runId, options, host);
  }
  restore(request: CellRunRequest, image: Uint8Array, plan: RestorePlan, host: unknown, tenant: string): Promise<CellOutcome> {
    return this.answer('restore', request, image, plan, host, tenant);
  }
  discard(runId: string): void {
    this.calls.push({ method: 'discard', args: [runId] });
  }

  private answer(method: string, ...args: unknown[]): Promise<CellOutcome> {
    this.calls.push({ method, args });
    const next = this.answers.shift() ?? completed('done');
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }
}

/** The tool host as the leg runner sees it: the legs it began and its replay listener. */
class FakeHost {
  readonly legs: number[] = [];
  replayed: (() => void) | undefined;
  beginLeg(timeoutMs: number): void {
    this.legs.push(timeoutMs);
  }
  whenReplayed(listener: () => void): void {
    this.replayed = listener;
  }
  guestCatalogJson(): string {
    return '{"globals":[],"mcp":[]}';
  }
}

const spec = (over: Partial<CellSpec> = {}): CellSpec => ({
  title: 't',
  code: 'return 1',
  restartSafe: false,
  awaitResults: false,
  limits: { ...SPEC_DEFAULT_LIMITS, timeoutMs: 5_000 },
  shell: {} as CellSpec['shell'],
  agentId: null,
  ...over,
});

function setUp(over: Partial<CellSpec> = {}) {
  const pool = new FakePool();
  const host = new FakeHost();
  const recorded: { outcome: CellOutcome; replyTo: string; startedAt: number }[] = [];
  const outcomes = {
    record: (_run: WorkerRun, outcome: CellOutcome, replyTo: string, startedAt: number) => {
      recorded.push({ outcome, replyTo, startedAt });
      return Promise.resolve({ status: outcome.status } as never);
    },
  } as unknown as RunOutcomes;
  const errors: string[] = [];
  const log = { error: (_fields: unknown, message: string) => errors.push(message), warn: () => undefined } as unknown as Logger;
  const config = { workerId: 'w1' } as AppConfig;
  const runner = new LegRunner(config, {} as RedisClient, pool as unknown as SandboxPool, outcomes, notIndexed);
  const run = new WorkerRun({ tenant: 'acme', sessionId: 's' }, 'run_1', 1, spec(over), host as unknown as RunToolHost);
  return { pool, host, recorded, errors, log, runner, run };
}

describe('LegRunner', () => {
  it('first leg: begins the leg with the run budget, runs the cell with its catalog and an image per park, records the outcome', async () => {
    const { pool, host, recorded, runner, run, log } = setUp();
    await runner.run(run, { kind: 'first', seed: [7] }, 'reply-1', log, 1234);
    expect(host.legs).toEqual([5_000]);
    expect(pool.calls.map((call) => call.method)).toEqual(['run']);
    expect(pool.calls[0].args[0]).toMatchObject({
      runId: 'run_1',
      code: 'return 1',
      catalogJson: '{"globals":[],"mcp":[]}',
      seed: [7],
      parkImage: true,
    });
    expect(pool.calls[0].args[0]).not.toHaveProperty('replay');
    expect(pool.calls[0].args[2]).toBe('acme');
    expect(recorded).toEqual([{ outcome: completed('done'), replyTo: 'reply-1', startedAt: 1234 }]);
  });

  it("ends its entry in the index of running legs, unless a wait resumed the run's next leg while it was recorded", async () => {
    const { run, log, pool } = setUp();
    const ended: number[] = [];
    const running = { ...notIndexed, ended: () => ended.push(run.leg) } as unknown as RunningLegs;
    let resumedMeanwhile = false;
    const outcomes = {
      record: () => {
        if (resumedMeanwhile) run.leg += 1;
        return Promise.resolve({ status: 'waiting' } as never);
      },
    } as unknown as RunOutcomes;
    const legs = new LegRunner({ workerId: 'w1' } as AppConfig, {} as RedisClient, pool as unknown as SandboxPool, outcomes, running);
    await legs.run(run, { kind: 'none', outcome: completed('x') }, 'r', log);
    resumedMeanwhile = true;
    await legs.run(run, { kind: 'none', outcome: completed('x') }, 'r', log);
    expect(ended).toEqual([1]);
  });

  it('none: runs nothing and records the outcome it was given', async () => {
    const { pool, host, recorded, runner, run, log } = setUp();
    const outcome = completed('given');
    await runner.run(run, { kind: 'none', outcome }, 'r', log);
    expect(pool.calls).toEqual([]);
    expect(host.legs).toEqual([]);
    expect(recorded[0].outcome).toBe(outcome);
  });

  it('resume: resumes the parked VM here with the run budget', async () => {
    const { pool, host, runner, run, log } = setUp();
    await runner.run(run, { kind: 'resume' }, 'r', log);
    expect(pool.calls[0]).toEqual({ method: 'resume', args: ['run_1', { timeoutMs: 5_000, awaitResults: false }, host] });
  });

  it('restore: restores the image with its plan', async () => {
    const { pool, runner, run, log } = setUp();
    const image = new Uint8Array([1, 2]);
    const plan: RestorePlan = { answers: [], redo: ['c1'], platform: [] };
    await runner.run(run, { kind: 'restore', image, plan }, 'r', log);
    expect(pool.calls[0].method).toBe('restore');
    expect(pool.calls[0].args.slice(1, 3)).toEqual([image, plan]);
  });

  it('replay: sends the plan with the cell and listens for the rebuild', async () => {
    const { pool, host, runner, run, log } = setUp({ restartSafe: true });
    const leg: Leg = { kind: 'replay', plan: { calls: [] } as never };
    await runner.run(run, leg, 'r', log);
    expect(pool.calls[0].args[0]).toMatchObject({ replay: { calls: [] }, restartSafe: true });
    expect(host.replayed).toBeDefined();
  });

  it.each([
    ['first', 'sandbox failed to run the cell'],
    ['resume', 'sandbox failed to resume the run'],
  ] as const)('a sandbox failure of a %s leg is logged and recorded as a host-phase internal error', async (kind, message) => {
    const { pool, recorded, errors, runner, run, log } = setUp();
    pool.answers = [new Error('thread died')];
    await runner.run(run, { kind }, 'r', log);
    expect(errors).toEqual([message]);
    expect(recorded[0].outcome).toMatchObject({
      status: 'failed',
      code: 'internal_error',
      phase: 'host',
      error: 'code mode sandbox failed to run the cell; the failure was logged.',
    });
  });

  it('awaitResults: a cell that would park is resumed at once, output gathered, until it completes', async () => {
    const { pool, host, recorded, runner, run, log } = setUp({ awaitResults: true });
    pool.answers = [waiting('a'), waiting('b'), completed('c')];
    await runner.run(run, { kind: 'first' }, 'r', log);
    expect(pool.calls.map((call) => call.method)).toEqual(['run', 'resume', 'resume']);
    expect(pool.calls[1].args[1]).toEqual({ timeoutMs: 5_000, awaitResults: true });
    expect(host.legs).toHaveLength(3);
    expect(recorded[0].outcome).toMatchObject({ status: 'completed', output: [line('a'), line('b'), line('c')] });
  });

  it('awaitResults: past snapshotTtlSeconds the run is discarded and fails with the timeout, its output kept', async () => {
    const { pool, recorded, runner, run, log } = setUp({ awaitResults: true, limits: { ...SPEC_DEFAULT_LIMITS, snapshotTtlSeconds: 0 } });
    pool.answers = [waiting('a')];
    await runner.run(run, { kind: 'first' }, 'r', log);
    expect(pool.calls.map((call) => call.method)).toEqual(['run', 'discard']);
    expect(recorded[0].outcome).toMatchObject({
      status: 'failed',
      code: 'timeout',
      phase: 'guest',
      error: TIMEOUT_MESSAGE,
      output: [line('a')],
    });
  });

  it('awaitResults: a resume is given no more than what is left of snapshotTtlSeconds', async () => {
    const { pool, host, runner, run, log } = setUp({
      awaitResults: true,
      limits: { ...SPEC_DEFAULT_LIMITS, timeoutMs: 600_000, snapshotTtlSeconds: 60 },
    });
    pool.answers = [waiting('a'), completed('b')];
    await runner.run(run, { kind: 'first' }, 'r', log);
    expect(host.legs[1]).toBeLessThanOrEqual(60_000);
    expect(host.legs[1]).toBeGreaterThan(50_000);
  });
});
