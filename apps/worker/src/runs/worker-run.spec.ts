import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import type { CellSpec } from '@codemode/contracts';
import type { RunToolHost } from '../tools/run-tool-host';
import { nextResidency, ResidencyError, WorkerRun, WorkerRuns, type Residency, type ResidencyMove } from './worker-run';

const spec: CellSpec = {
  title: 't',
  code: 'return 1',
  restartSafe: false,
  awaitResults: false,
  limits: { ...SPEC_DEFAULT_LIMITS },
  shell: {} as CellSpec['shell'],
  agentId: null,
};
const run = (runId: string, expiresAt = 0): WorkerRun => {
  const r = new WorkerRun({ tenant: 't', sessionId: 's' }, runId, 1, spec, {} as RunToolHost);
  r.expiresAt = expiresAt;
  return r;
};
/** Begins the run and parks it (a leg that parked). */
const parked = (runs: WorkerRuns, r: WorkerRun): WorkerRun => {
  runs.begin(r);
  runs.move(r, 'park');
  return r;
};

describe('nextResidency', () => {
  const allowed: [Residency, ResidencyMove, Residency][] = [
    ['running', 'park', 'parked'],
    ['running', 'end', 'gone'],
    ['running', 'drop', 'gone'],
    ['parked', 'park', 'parked'],
    ['parked', 'take', 'resuming'],
    ['parked', 'handOver', 'handingOver'],
    ['parked', 'end', 'gone'],
    ['parked', 'drop', 'gone'],
    ['resuming', 'giveBack', 'parked'],
    ['resuming', 'resume', 'running'],
    ['resuming', 'end', 'gone'],
    ['resuming', 'drop', 'gone'],
    ['handingOver', 'leave', 'gone'],
    ['handingOver', 'end', 'gone'],
    ['handingOver', 'drop', 'gone'],
  ];
  it.each(allowed)('%s --%s--> %s', (from, move, to) => {
    expect(nextResidency('r', from, move)).toBe(to);
  });

  const refused: [Residency, ResidencyMove][] = [
    // A running leg is not parked: nothing can take, give back or hand it over.
    ['running', 'take'],
    ['running', 'giveBack'],
    ['running', 'resume'],
    ['running', 'handOver'],
    // A run being resumed cannot be handed over (shutdown, eviction) or parked under its take.
    ['resuming', 'handOver'],
    ['resuming', 'take'],
    ['resuming', 'park'],
    ['parked', 'resume'],
    ['parked', 'giveBack'],
    ['handingOver', 'take'],
    ['handingOver', 'park'],
    // Gone is gone: no move brings a run back.
    ['gone', 'park'],
    ['gone', 'take'],
    ['gone', 'end'],
    ['gone', 'drop'],
  ];
  it.each(refused)('refuses %s --%s-->', (from, move) => {
    expect(() => nextResidency('r1', from, move)).toThrow(new ResidencyError('r1', from, move));
    expect(() => nextResidency('r1', from, move)).toThrow(`run r1 cannot ${move} while ${from}`);
  });
});

describe('WorkerRuns', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1000 }));
  afterEach(() => jest.useRealTimers());

  it('expires parked runs in order with one timer armed for the earliest', () => {
    const expired: string[] = [];
    const runs = new WorkerRuns((r) => expired.push(r.runId));
    parked(runs, run('b', 3000));
    parked(runs, run('a', 2000));
    parked(runs, run('c', 5000));
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a', 'b']);
    expect(runs.size).toBe(1);
    jest.advanceTimersByTime(2000);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect(runs.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('an expired run ends: it is gone from the index before its handler runs', () => {
    const seen: Residency[] = [];
    const runs = new WorkerRuns((r) => seen.push(r.residency));
    const a = parked(runs, run('a', 2000));
    jest.advanceTimersByTime(1000);
    expect(seen).toEqual(['gone']);
    expect(a.residency).toBe('gone');
    expect(runs.get('a')).toBeUndefined();
  });

  it('does not expire a run being resumed or running a leg; one given back past its expiry expires at once', () => {
    const expired: string[] = [];
    const runs = new WorkerRuns((r) => expired.push(r.runId));
    const a = parked(runs, run('a', 2000));
    runs.move(a, 'take');
    const b = run('b', 1500);
    runs.begin(b);
    jest.advanceTimersByTime(5000);
    expect(expired).toEqual([]);
    expect(runs.get('a')?.residency).toBe('resuming');
    runs.move(a, 'giveBack');
    // A resume not taken starts no leg: the park the first leg may still be recording is its own.
    expect(a.leg).toBe(1);
    jest.advanceTimersByTime(0);
    expect(expired).toEqual(['a']);
    expect(runs.get('b')?.residency).toBe('running');
  });

  it('a run parked again re-arms for its new expiry', () => {
    const expired: string[] = [];
    const runs = new WorkerRuns((r) => expired.push(r.runId));
    const a = parked(runs, run('a', 2000));
    a.imaged = true;
    runs.move(a, 'take');
    runs.move(a, 'resume');
    // Its next leg, whose VM the earlier park's image does not stand for.
    expect([a.leg, a.imaged]).toEqual([2, false]);
    a.expiresAt = 4000;
    runs.move(a, 'park');
    jest.advanceTimersByTime(2000);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a']);
  });

  it('answers a run as parked only while it is parked', () => {
    const runs = new WorkerRuns(() => undefined);
    const a = run('a', 9000);
    runs.begin(a);
    expect(runs.parked('a')).toBeUndefined();
    runs.move(a, 'park');
    expect(runs.parked('a')).toBe(a);
    runs.move(a, 'take');
    expect(runs.parked('a')).toBeUndefined();
    expect(runs.get('a')).toBe(a);
    runs.close();
  });

  it('refuses a second run of the same id, and a gone run leaves the index', () => {
    const runs = new WorkerRuns(() => undefined);
    const a = run('a');
    runs.begin(a);
    expect(() => runs.begin(run('a'))).toThrow('run a is already on this worker (running)');
    runs.move(a, 'end');
    expect(runs.get('a')).toBeUndefined();
    expect(() => runs.move(a, 'drop')).toThrow('run a cannot drop while gone');
    const again = run('a');
    runs.begin(again);
    expect(runs.get('a')).toBe(again);
  });
});
