import { SPEC_DEFAULT_LIMITS, type AppConfig } from '@codemode/config';
import type { CellSpec, CodeModeOutput, CodeModeResult } from '@codemode/contracts';
import type { CellOutcome, WaitingOutcome } from '@codemode/cells';
import {
  RUN_HISTORY_LIMIT_MESSAGE,
  RunHistoryLimitError,
  StoreUnavailableError,
  TrailNotLandedError,
  type AppendInput,
} from '@codemode/events';
import { StoreCapacityError } from '@codemode/store';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { sessionCatalog } from '../tools/testing/tool-call-fakes';
import type { RunToolHost } from '../tools/run-tool-host';
import { EVENTS_UNRECORDED_MESSAGE } from '../tools/run-event-writer';
import { RunOutcomes } from './run-outcomes.service';
import { WorkerRun, WorkerRuns } from './worker-run';

const line = (text: string): CodeModeOutput => ({ type: 'text', text });
const completed: CellOutcome = {
  status: 'completed',
  valueJson: '42',
  output: [line('hi')],
  consoleTruncated: false,
  bridgeDispatchStarted: true,
};
const waiting: WaitingOutcome = {
  status: 'waiting',
  reason: 'yield',
  pending: [],
  snapshotBytes: 2048,
  memoryBytes: 4096,
  output: [line('so far')],
  consoleTruncated: false,
  bridgeDispatchStarted: true,
};

/** A run's tool host as the outcome recorder reads it. */
class FakeHost {
  historyFull = false;
  eventsUnrecorded = false;
  storeFailure: string | null = null;
  writes = new Map<string, string | null>();
  /** What `landed` answers: the run's trailed events (a read's) written, or the run stopped on them. */
  trailed: Promise<void> = Promise.resolve();
  /** What `sendMarkedTrail` answers (undefined: nothing held, the end waits for `landed`), and whether it was asked. */
  mark: string | undefined;
  markAsked = false;
  private readonly catalog = sessionCatalog();
  landed() {
    return this.trailed;
  }
  sendMarkedTrail() {
    this.markAsked = true;
    return this.mark;
  }
  telemetry() {
    return this.catalog.telemetry({ searchCount: 0, describeCount: 0, callCount: 1 });
  }
  storeWrites() {
    return this.writes;
  }
}

/** Every collaborator of RunOutcomes in memory, noting what it was asked. */
function setUp(options: { spec?: Partial<CellSpec>; config?: Partial<AppConfig> } = {}) {
  const noted: string[] = [];
  const finished: CodeModeResult[] = [];
  /** The trail marks ends were sent behind, in order. */
  const fenced: string[] = [];
  const appended: AppendInput[] = [];
  const fakes = {
    runs: {
      append: (_ref: unknown, input: AppendInput) => {
        if (fakes.refuseAppend) return Promise.reject(fakes.refuseAppend);
        appended.push(input);
        return Promise.resolve({ eventId: '1-0' });
      },
      get: () => Promise.resolve(null),
      /** RunLedger.park: the image and run.parked in one step (park-run.lua). */
      park: (_ref: unknown, input: { runId: string; epoch: number; data: unknown; publish: unknown }) => {
        if (fakes.refuseAppend) return Promise.reject(fakes.refuseAppend);
        appended.push({
          type: 'run.parked',
          runId: input.runId,
          epoch: input.epoch,
          data: input.data,
          publish: input.publish,
        } as AppendInput);
        return Promise.resolve({ eventId: '1-0' });
      },
    },
    refuseAppend: undefined as Error | undefined,
    resident: {
      park: () => noted.push('park'),
      keepWithinBudget: () => noted.push('keepWithinBudget'),
      handOver: () => Promise.resolve(noted.push('handOver')),
      ended: () => noted.push('ended'),
      dropUnrecorded: () => noted.push('dropUnrecorded'),
      discardVm: () => noted.push('discardVm'),
    },
    ends: {
      finish: (run: { runId: string }, result: CodeModeResult, end: { trailMark?: string } = {}) => {
        if (end.trailMark !== undefined) fenced.push(end.trailMark);
        if (end.trailMark !== undefined && fakes.trailRefused) return Promise.reject(new TrailNotLandedError(run.runId));
        finished.push(result);
        return Promise.resolve();
      },
    },
    /** Set: an end sent behind the run's trailed events finds them not all landed. */
    trailRefused: false,
    sessionStore: {
      commit: () => (fakes.storeFull ? Promise.reject(new StoreCapacityError(10)) : Promise.resolve(noted.push('commit'))),
    },
    storeFull: false,
    results: { save: () => (noted.push('saved'), Promise.resolve({ id: 'res_1', bytes: 2, expiresAt: new Date().toISOString() })) },
    parkedIndex: { add: () => Promise.resolve(noted.push('indexed')) },
    live: { remove: () => Promise.resolve(noted.push('notLive')) },
    limits: {
      admitParked: (_ref: unknown, _runId: string, _expiresAt: number, bytes: number) => {
        noted.push(`admit ${bytes}`);
        return Promise.resolve(fakes.quotaFull ? { admitted: false, limit: 'runs' } : { admitted: true });
      },
      parkedRefusal: () => 'the tenant has its most parked runs',
    },
    quotaFull: false,
    images: { capture: () => (noted.push('image'), { bytes: new Uint8Array(8) }) },
  };
  const config = { alwaysReplay: false, ...options.config } as AppConfig;
  const logger = { warn: () => undefined } as unknown as Logger;
  const outcomes = new RunOutcomes(
    config,
    logger,
    fakes.runs as never,
    fakes.resident as never,
    fakes.ends as never,
    fakes.sessionStore as never,
    fakes.results as never,
    new WorkerMetrics('test'),
    fakes.parkedIndex as never,
    fakes.live as never,
    fakes.limits as never,
    fakes.images as never,
  );
  const host = new FakeHost();
  const spec: CellSpec = {
    title: 't',
    code: 'return 42',
    restartSafe: false,
    awaitResults: false,
    limits: { ...SPEC_DEFAULT_LIMITS },
    shell: {} as CellSpec['shell'],
    agentId: null,
    ...options.spec,
  };
  const run = new WorkerRun({ tenant: 'acme', sessionId: 's' }, 'run_1', 2, spec, host as unknown as RunToolHost);
  return { outcomes, run, host, fakes, noted, finished, fenced, appended };
}

describe('RunOutcomes.record: a run that ends', () => {
  it('writes its one terminal answer and lets the run go', async () => {
    const { outcomes, run, noted, finished } = setUp();
    const result = await outcomes.record(run, completed, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'completed', value: 42 });
    expect(finished).toEqual([result]);
    expect(noted).toEqual(['ended']);
  });

  it("commits the cell's buffered store writes when it completes", async () => {
    const { outcomes, run, host, noted } = setUp();
    host.writes.set('k', '1');
    await outcomes.record(run, completed, 'reply', Date.now());
    expect(noted).toEqual(['commit', 'ended']);
  });

  it('fails the cell when the store has no room left for its writes at commit', async () => {
    const { outcomes, run, host, fakes } = setUp();
    host.writes.set('k', '1');
    fakes.storeFull = true;
    const result = await outcomes.record(run, completed, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'failed', code: 'internal_error', failurePhase: 'host' });
    expect(result.status === 'failed' && result.error).toMatch(/^RangeError: /);
  });

  it('fails a run whose host reached the history cap, whatever its cell did (SPEC §6)', async () => {
    const { outcomes, run, host } = setUp();
    host.historyFull = true;
    const result = await outcomes.record(run, completed, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'failed', code: 'internal_error', error: RUN_HISTORY_LIMIT_MESSAGE });
  });

  it("records the leg only once its reads' trailed events landed, and fails it when they hit the cap meanwhile", async () => {
    const { outcomes, run, host, noted } = setUp();
    let land = (): void => undefined;
    host.trailed = new Promise((resolve) => (land = resolve));
    const recording = outcomes.record(run, completed, 'reply', Date.now());
    await new Promise((resolve) => setImmediate(resolve));
    expect(noted).toEqual([]);
    host.historyFull = true;
    land();
    await expect(recording).resolves.toMatchObject({ status: 'failed', code: 'internal_error', error: RUN_HISTORY_LIMIT_MESSAGE });
    expect(noted).toEqual(['ended']);
  });

  it("sends an end alone right behind its reads' trailed events, fenced by their mark, without waiting for them", async () => {
    const { outcomes, run, host, finished, fenced } = setUp();
    host.mark = 'm1';
    host.trailed = new Promise(() => undefined);
    const result = await outcomes.record(run, completed, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'completed', value: 42 });
    expect(fenced).toEqual(['m1']);
    expect(finished).toEqual([result]);
  });

  it('writes the end again, as the trailed events decide, once they settle when they did not all land before it', async () => {
    const { outcomes, run, host, fakes, finished, fenced } = setUp();
    host.mark = 'm1';
    fakes.trailRefused = true;
    let land = (): void => undefined;
    host.trailed = new Promise((resolve) => (land = resolve));
    const recording = outcomes.record(run, completed, 'reply', Date.now());
    await new Promise((resolve) => setImmediate(resolve));
    expect(fenced).toEqual(['m1']);
    expect(finished).toEqual([]);
    host.historyFull = true;
    land();
    await expect(recording).resolves.toMatchObject({ status: 'failed', code: 'internal_error', error: RUN_HISTORY_LIMIT_MESSAGE });
    expect(fenced).toEqual(['m1']);
    expect(finished).toHaveLength(1);
  });

  it("saves a value too large to answer by reference only once its reads' events landed, and not when they stopped the run", async () => {
    const { outcomes, run, host, fakes, noted } = setUp();
    host.mark = 'm1';
    fakes.trailRefused = true;
    let land = (): void => undefined;
    host.trailed = new Promise((resolve) => (land = resolve));
    const large: CellOutcome = { ...completed, valueJson: JSON.stringify(Array.from({ length: 20_000 }, (_, id) => ({ id }))) };
    const recording = outcomes.record(run, large, 'reply', Date.now());
    await new Promise((resolve) => setImmediate(resolve));
    expect(noted).toEqual([]);
    host.historyFull = true;
    land();
    await expect(recording).resolves.toMatchObject({ status: 'failed', error: RUN_HISTORY_LIMIT_MESSAGE });
    expect(noted).toEqual(['ended']);

    const saving = setUp();
    const saved = await saving.outcomes.record(saving.run, large, 'reply', Date.now());
    expect(saved).toMatchObject({ status: 'completed', value: { reference: { id: 'res_1' } } });
    expect(saving.noted).toEqual(['saved', 'ended']);
  });

  it("a completed cell with store writes to commit waits for its reads' events: nothing goes before them", async () => {
    const { outcomes, run, host, noted } = setUp();
    host.mark = 'm1';
    host.writes.set('k', '1');
    let land = (): void => undefined;
    host.trailed = new Promise((resolve) => (land = resolve));
    const recording = outcomes.record(run, completed, 'reply', Date.now());
    await new Promise((resolve) => setImmediate(resolve));
    expect(host.markAsked).toBe(false);
    expect(noted).toEqual([]);
    land();
    await recording;
    expect(noted).toEqual(['commit', 'ended']);
  });

  it("fails a run whose reads' events could not be written, though its cell completed", async () => {
    const { outcomes, run, host } = setUp();
    host.eventsUnrecorded = true;
    const result = await outcomes.record(run, completed, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'failed', code: 'internal_error', error: EVENTS_UNRECORDED_MESSAGE });
  });

  it("fails a run a host call's Redis failure stopped, with the store's words", async () => {
    const { outcomes, run, host } = setUp();
    host.storeFailure = 'the session store is unavailable; retry shortly';
    const result = await outcomes.record(run, completed, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: host.storeFailure });
  });
});

describe('RunOutcomes.record: a run that parks', () => {
  it('admits it to the quota by its memory, captures its image, sends its index entry ahead of the one-step park of image and run.parked', async () => {
    const { outcomes, run, host, noted, appended } = setUp();
    host.mark = 'm1';
    const before = Date.now();
    const result = await outcomes.record(run, waiting, 'reply', before);
    expect(result).toMatchObject({ status: 'waiting', runId: 'run_1', reason: 'yield' });
    // A park goes after its reads' events, never behind them fenced: only an end is.
    expect(host.markAsked).toBe(false);
    expect(noted).toEqual(['admit 4096', 'image', 'park', 'indexed', 'notLive', 'keepWithinBudget']);
    expect(appended[0]).toMatchObject({ type: 'run.parked', runId: 'run_1', epoch: 2, data: { snapshotBytes: 2048 } });
    expect(appended[0].publish).toBeDefined();
    expect(run.holdsParkedQuota).toBe(true);
    expect(run.imaged).toBe(true);
    expect(run.imageBytes).toBe(2048);
    expect(run.priorOutputBytes).toBeGreaterThan(0);
    expect(run.expiresAt).toBeGreaterThanOrEqual(before + run.limits.snapshotTtlSeconds * 1000);
  });

  it('fails the cell instead of parking it past its tenant quota (SPEC §10), its VM discarded', async () => {
    const { outcomes, run, fakes, noted, finished } = setUp();
    fakes.quotaFull = true;
    const result = await outcomes.record(run, waiting, 'reply', Date.now());
    expect(result).toMatchObject({
      status: 'failed',
      code: 'runtime_unavailable',
      error: 'the tenant has its most parked runs',
    });
    expect(noted).toEqual(['admit 4096', 'discardVm', 'ended']);
    expect(finished).toEqual([result]);
    expect(run.holdsParkedQuota).toBe(false);
  });

  it('CODEMODE_ALWAYS_REPLAY: a replay-safe run gets no image and is handed over at once', async () => {
    const { outcomes, run, noted } = setUp({ spec: { restartSafe: true }, config: { alwaysReplay: true } });
    await outcomes.record(run, waiting, 'reply', Date.now());
    expect(noted).not.toContain('image');
    expect(noted).toContain('handOver');
    expect(run.imaged).toBe(false);
  });

  /**
   * A park whose first write landed but whose reply was lost (Redis went away as it answered), with
   * the resident table real: `move` is what a wait's take and resume would do meanwhile.
   */
  function lostParkReply(movesBeforeRetry: 'taken' | 'takenDuringAdmission' | 'refusedDuringAdmission' | 'none') {
    const set = setUp();
    const { run, fakes, noted } = set;
    const here = new WorkerRuns(() => undefined);
    here.begin(run);
    fakes.resident.park = () => (here.move(run, 'park'), noted.push('park'));
    const park = fakes.runs.park;
    fakes.runs.park = (ref, input) => {
      fakes.runs.park = park;
      void park(ref, input);
      if (movesBeforeRetry === 'taken') {
        here.move(run, 'take');
        here.move(run, 'resume');
      }
      return Promise.reject(new StoreUnavailableError(new Error('Connection is closed.')));
    };
    const admit = fakes.limits.admitParked;
    fakes.limits.admitParked = (ref, runId, expiresAt, bytes) => {
      const admitted = admit(ref, runId, expiresAt, bytes);
      // A take whose resume lands (or is refused) a moment later, while the retry waits for it.
      if (movesBeforeRetry !== 'taken' && movesBeforeRetry !== 'none' && run.residency === 'parked') {
        here.move(run, 'take');
        setTimeout(() => here.move(run, movesBeforeRetry === 'takenDuringAdmission' ? 'resume' : 'giveBack'), 30);
      }
      return admitted;
    };
    return { ...set, here };
  }

  it("a park sent again after its reply was lost is not written once a wait resumed the run: one run.parked per leg, the next leg's VM not parked again", async () => {
    const { outcomes, run, noted, appended, here } = lostParkReply('taken');
    const result = await outcomes.record(run, waiting, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'waiting', runId: 'run_1', reason: 'yield' });
    expect(appended.map((e) => e.type)).toEqual(['run.parked']);
    // Nothing is asked again: not its quota place (whose refusal would discard the next leg's VM), nor the park.
    expect(noted.filter((n) => n.startsWith('admit') || n === 'park' || n === 'notLive')).toEqual(['admit 4096', 'park']);
    expect([run.residency, run.leg]).toEqual(['running', 2]);
    here.close();
  });

  it('nor when a wait takes the run while the park sent again is being admitted to the quota: the take is awaited', async () => {
    const { outcomes, run, noted, appended, here } = lostParkReply('takenDuringAdmission');
    await outcomes.record(run, waiting, 'reply', Date.now());
    expect(appended.map((e) => e.type)).toEqual(['run.parked']);
    expect(noted.filter((n) => n.startsWith('admit') || n === 'park')).toEqual(['admit 4096', 'park', 'admit 4096']);
    expect([run.residency, run.leg]).toEqual(['running', 2]);
    here.close();
  });

  // Written again while its run is still parked here: a take refused meanwhile (the park had not
  // landed) gave it back, or nothing took it (the script answers a first park that landed).
  it.each(['refusedDuringAdmission', 'none'] as const)('a park sent again while its run is parked here is written (%s)', async (moves) => {
    const { outcomes, run, appended, here } = lostParkReply(moves);
    await outcomes.record(run, waiting, 'reply', Date.now());
    expect(appended.map((e) => e.type)).toEqual(['run.parked', 'run.parked']);
    expect([run.residency, run.leg]).toEqual(['parked', 1]);
    here.close();
  });

  it('a park refused at the history cap drops the VM and ends the run with the cap error', async () => {
    const { outcomes, run, fakes, noted, finished } = setUp();
    fakes.refuseAppend = new RunHistoryLimitError('run_1', 10, 100);
    const result = await outcomes.record(run, waiting, 'reply', Date.now());
    expect(result).toMatchObject({ status: 'failed', error: RUN_HISTORY_LIMIT_MESSAGE });
    expect(noted).toContain('dropUnrecorded');
    expect(finished).toEqual([result]);
  });
});

describe('RunOutcomes.failUnprepared', () => {
  it("answers a Redis outage in the store's words, anything else as an internal error to retry", async () => {
    const { outcomes, run, finished } = setUp();
    const outage = await outcomes.failUnprepared(run, 'reply', new StoreUnavailableError(new Error('ECONNREFUSED')));
    expect(outage).toMatchObject({
      status: 'failed',
      code: 'runtime_unavailable',
      error: 'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.',
    });
    const bug = await outcomes.failUnprepared(run, 'reply', new TypeError('undefined is not a function'));
    expect(bug).toMatchObject({ status: 'failed', code: 'internal_error' });
    expect(bug.status === 'failed' && bug.error).toMatch(/Retry the exec\.$/);
    expect(finished).toEqual([outage, bug]);
  });
});
