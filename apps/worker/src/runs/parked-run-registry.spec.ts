import { ParkedRunRegistry, type ParkedRun } from './parked-run-registry';

const run = (runId: string, expiresAt: number): ParkedRun => ({
  ref: { tenant: 't', sessionId: 's' },
  runId,
  epoch: 1,
  limits: {} as ParkedRun['limits'],
  restartSafe: false,
  awaitResults: false,
  priorOutputBytes: 0,
  expiresAt,
  host: {} as ParkedRun['host'],
});

describe('ParkedRunRegistry', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1000 }));
  afterEach(() => jest.useRealTimers());

  it('expires runs in order with one timer armed for the earliest', () => {
    const expired: string[] = [];
    const registry = new ParkedRunRegistry((r) => expired.push(r.runId));
    registry.park(run('b', 3000));
    registry.park(run('a', 2000));
    registry.park(run('c', 5000));
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a', 'b']);
    expect(registry.size).toBe(1);
    jest.advanceTimersByTime(2000);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('does not expire a run taken for resume, and re-arms when it parks again', () => {
    const expired: string[] = [];
    const registry = new ParkedRunRegistry((r) => expired.push(r.runId));
    registry.park(run('a', 2000));
    expect(registry.take('a')?.runId).toBe('a');
    jest.advanceTimersByTime(5000);
    expect(expired).toEqual([]);
    registry.park(run('a', 9000));
    jest.advanceTimersByTime(3000);
    expect(expired).toEqual(['a']);
  });
});
