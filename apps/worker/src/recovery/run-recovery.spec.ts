import { SPEC_DEFAULT_LIMITS, type AppConfig } from '@codemode/config';
import type { CellJob, CellSpec, CodeModeResult, ReplayJob, RunView } from '@codemode/contracts';
import { RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';
import type { LoggedEvent } from '@codemode/events';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import type { Leg } from '../runs/leg-runner.service';
import type { RunningLegs } from '../runs/running-legs.service';
import type { WorkerRun } from '../runs/worker-run';

/** No index of running legs (RunningLegs has its own int-spec): takes the leg as asked. */
const notIndexed = {
  beside: <T>(_run: unknown, _replyTo: string, take: () => Promise<T>) => take(),
  ended: () => undefined,
} as unknown as RunningLegs;
import { LOST_WITH_WORKER_ERROR, RunRecovery } from './run-recovery.service';

const spec: CellSpec = {
  title: 't',
  code: 'return 1',
  restartSafe: false,
  awaitResults: false,
  limits: { ...SPEC_DEFAULT_LIMITS },
  shell: {
    backgroundMs: 1000,
    timeoutSeconds: 30,
    cleanupMs: 5000,
    maxOutputChars: 100,
    pendingMaxOutputChars: 50,
    inputWaitIdleMs: 200,
    notifyOnExit: true,
    notifyOnExitEmptySuccess: false,
  },
  agentId: null,
};

const event = (type: string, data: Record<string, unknown>, n = 1): LoggedEvent =>
  ({ id: `${n}-0`, type, runId: 'run_1', at: '2026-12-04T00:00:00.000Z', data, epoch: 1 }) as LoggedEvent;
const REQUESTED = event('run.requested', { ...spec });
const TOOL_CALLED = event('tool.called', { callId: 'bridge:callValue:1', tool: 'refund', source: 'client', inputBytes: 2 }, 2);

const view = (over: Partial<RunView>): RunView =>
  ({
    runId: 'run_1',
    status: 'running',
    owner: 'w-dead',
    epoch: 1,
    restartSafe: false,
    createdAt: '2026-12-04T00:00:00.000Z',
    ...over,
  }) as RunView;

/** RunRecovery's collaborators in memory, noting what they were asked. */
function setUp(
  options: { run?: RunView | null; ownerGone?: boolean; taken?: boolean; events?: LoggedEvent[]; image?: Uint8Array | null } = {},
) {
  const noted: string[] = [];
  const legs: Leg[] = [];
  const ended: { how: string; result?: CodeModeResult; reason?: string }[] = [];
  const fakes = {
    runs: {
      get: () => Promise.resolve(options.run === undefined ? view({}) : options.run),
      takeOver: () => {
        noted.push('takeOver');
        return Promise.resolve(options.taken === false ? { taken: false } : { taken: true, epoch: 2 });
      },
      resume: () => Promise.resolve(Boolean(noted.push('resume'))),
    },
    events: { runEvents: () => Promise.resolve(options.events ?? [REQUESTED]) },
    ownership: { ownerGone: () => Promise.resolve(options.ownerGone ?? true) },
    toolHosts: {
      create: () => {
        if (fakes.hostFails) return Promise.reject(new Error('policy unreadable'));
        noted.push('host');
        return Promise.resolve({ guestCatalogHash: () => 'hash-now' });
      },
    },
    hostFails: false,
    cells: {
      execute: (_run: WorkerRun, leg: Leg) => {
        legs.push(leg);
        return Promise.resolve({ status: 'completed' } as CodeModeResult);
      },
    },
    ends: {
      lose: (_run: unknown, how: { reason: string; answer: { result: CodeModeResult } }) => {
        ended.push({ how: 'lose', result: how.answer.result, reason: how.reason });
        return Promise.resolve(true);
      },
      finish: (_run: unknown, result: CodeModeResult) => {
        ended.push({ how: 'finish', result });
        return Promise.resolve();
      },
    },
    restorer: {
      usableImage: () => Promise.resolve(options.image ?? null),
      restoreTaken: () => Promise.resolve(noted.push('restore')),
    },
  };
  const log = { child: () => log, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;
  const recovery = new RunRecovery(
    { workerId: 'w-me', shellDefaults: {} } as AppConfig,
    log,
    fakes.runs as never,
    fakes.events as never,
    fakes.ownership as never,
    fakes.toolHosts as never,
    fakes.cells as never,
    fakes.ends as never,
    new WorkerMetrics('test'),
    fakes.restorer as never,
    notIndexed,
  );
  return { recovery, fakes, noted, legs, ended };
}

const cellJob: CellJob = { tenant: 'acme', sessionId: 's', runId: 'run_1', replyTo: 'reply', spec } as CellJob;
const replayJob = (resume: boolean): ReplayJob =>
  ({
    tenant: 'acme',
    sessionId: 's',
    runId: 'run_1',
    replyTo: 'reply',
    ...(resume ? { resume: { token: 'tok', input: null } } : {}),
  }) as ReplayJob;

describe('RunRecovery.recoverStalled: a cell job re-delivered after its worker stalled', () => {
  it('leaves a run that is no longer running', async () => {
    const { recovery, noted } = setUp({ run: view({ status: 'completed' }) });
    await expect(recovery.recoverStalled(cellJob)).resolves.toBe(true);
    expect(noted).toEqual([]);
  });

  it('defers while the owner still looks alive', async () => {
    const { recovery, noted } = setUp({ ownerGone: false });
    await expect(recovery.recoverStalled(cellJob)).resolves.toBe(false);
    expect(noted).toEqual([]);
  });

  it('defers a second recovery of a run whose recovery is under way here (taken over, not yet in the pool)', async () => {
    const { recovery, fakes, noted } = setUp({ run: view({ restartSafe: true }) });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const execute = fakes.cells.execute;
    fakes.cells.execute = (run, leg) => held.then(() => execute(run, leg));
    const first = recovery.recoverStalled(cellJob);
    await new Promise((resolve) => setImmediate(resolve));
    expect(noted).toEqual(['takeOver', 'host']);
    await expect(recovery.recoverStalled(cellJob)).resolves.toBe(false);
    expect(noted).toEqual(['takeOver', 'host']);
    release();
    await expect(first).resolves.toBe(true);
  });

  it('runs again from the start a first leg that touched nothing outside its VM', async () => {
    const { recovery, noted, legs, ended } = setUp();
    await expect(recovery.recoverStalled(cellJob)).resolves.toBe(true);
    expect(noted).toEqual(['takeOver', 'host']);
    expect(legs).toEqual([{ kind: 'first' }]);
    expect(ended).toEqual([]);
  });

  it('never runs twice a cell that called a tool: it ends run.lost', async () => {
    const { recovery, legs, ended } = setUp({ events: [REQUESTED, TOOL_CALLED] });
    await recovery.recoverStalled(cellJob);
    expect(legs).toEqual([]);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ how: 'lose', result: { status: 'failed', error: LOST_WITH_WORKER_ERROR } });
  });

  it('does nothing more when another worker took the run over first', async () => {
    const { recovery, noted, legs, ended } = setUp({ taken: false });
    await expect(recovery.recoverStalled(cellJob)).resolves.toBe(true);
    expect(noted).toEqual(['takeOver']);
    expect([legs, ended]).toEqual([[], []]);
  });

  it('fails the run it took over when rebuilding it throws, rather than leave it running', async () => {
    const { recovery, fakes, ended } = setUp();
    fakes.hostFails = true;
    await recovery.recoverStalled(cellJob);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ how: 'finish', result: { status: 'failed', code: 'internal_error' } });
  });

  it('rebuilds a replay-safe run by replay (with its recorded seed)', async () => {
    const started = event('run.started', { workerId: 'w-dead', epoch: 1, recovery: { seed: [1, 2, 3, 4], catalogHash: 'hash-now' } }, 2);
    const { recovery, legs } = setUp({
      run: view({ restartSafe: true }),
      events: [event('run.requested', { ...spec, restartSafe: true }), started],
    });
    await recovery.recoverStalled(cellJob);
    expect(legs).toHaveLength(1);
    expect(legs[0]).toMatchObject({ kind: 'replay', seed: [1, 2, 3, 4] });
  });

  it('fails a replay-safe run as diverged when its tools changed since it started', async () => {
    const started = event('run.started', { workerId: 'w-dead', epoch: 1, recovery: { seed: [1, 2, 3, 4], catalogHash: 'hash-then' } }, 2);
    const { recovery, legs } = setUp({
      run: view({ restartSafe: true }),
      events: [event('run.requested', { ...spec, restartSafe: true }), started],
    });
    await recovery.recoverStalled(cellJob);
    expect(legs).toHaveLength(1);
    expect(legs[0]).toMatchObject({ kind: 'none', outcome: { status: 'failed' } });
    expect(JSON.stringify(legs[0])).toContain('the session’s tools changed since the run started');
  });
});

describe('RunRecovery.replay: a wait on a parked run whose owner is gone', () => {
  it('does nothing when the run is not parked', async () => {
    const { recovery, noted } = setUp({ run: view({ status: 'completed' }) });
    await recovery.replay(replayJob(true));
    expect(noted).toEqual([]);
  });

  it('records lost a run with no usable image that cannot be replayed, the wait told it is unavailable', async () => {
    const { recovery, noted, ended } = setUp({ run: view({ status: 'waiting' }) });
    await recovery.replay(replayJob(true));
    expect(noted).toEqual([]);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ how: 'lose', result: { status: 'failed', error: RUN_UNAVAILABLE_MESSAGE } });
  });

  it('takes the run over, resumes it in the ledger and restores it from its image', async () => {
    const { recovery, noted, ended } = setUp({ run: view({ status: 'waiting' }), image: new Uint8Array([1]) });
    await recovery.replay(replayJob(true));
    expect(noted).toEqual(['takeOver', 'resume', 'restore']);
    expect(ended).toEqual([]);
  });
});
