import { LegWatchdog, MAX_DEFERRED_OVERRUN_MS } from './leg-watchdog';

describe('LegWatchdog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('blames its run graceMs past the budget when that run executes', () => {
    const overran = jest.fn();
    const watchdog = new LegWatchdog(300, () => true, overran);
    watchdog.arm(1000);
    jest.advanceTimersByTime(1299);
    expect(overran).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(overran).toHaveBeenCalledTimes(1);
  });

  it('defers while another run executes, and blames its own once it executes', () => {
    let executing = false;
    const overran = jest.fn();
    const watchdog = new LegWatchdog(300, () => executing, overran);
    watchdog.arm(1000);
    jest.advanceTimersByTime(1300 + 5 * 300);
    expect(overran).not.toHaveBeenCalled();
    executing = true;
    jest.advanceTimersByTime(300);
    expect(overran).toHaveBeenCalledTimes(1);
  });

  it('blames its run after MAX_DEFERRED_OVERRUN_MS of deferring, even when it never executes', () => {
    const overran = jest.fn();
    const watchdog = new LegWatchdog(300, () => false, overran);
    watchdog.arm(1000);
    jest.advanceTimersByTime(1300 + MAX_DEFERRED_OVERRUN_MS - 300);
    expect(overran).not.toHaveBeenCalled();
    jest.advanceTimersByTime(600);
    expect(overran).toHaveBeenCalledTimes(1);
  });

  it('defers afresh under a new budget: time deferred under an earlier one does not count', () => {
    const overran = jest.fn();
    const watchdog = new LegWatchdog(300, () => false, overran);
    watchdog.arm(1000);
    jest.advanceTimersByTime(1300 + 3 * 300);
    // Idle for the host past MAX_DEFERRED_OVERRUN_MS, then a new budget, spent while another run executes.
    watchdog.arm(undefined);
    jest.advanceTimersByTime(MAX_DEFERRED_OVERRUN_MS + 5000);
    watchdog.arm(1000);
    jest.advanceTimersByTime(1300 + 10 * 300);
    expect(overran).not.toHaveBeenCalled();
    jest.advanceTimersByTime(MAX_DEFERRED_OVERRUN_MS);
    expect(overran).toHaveBeenCalledTimes(1);
  });

  it('a disarm, a re-arm or a stop replaces the pending deadline', () => {
    const overran = jest.fn();
    const watchdog = new LegWatchdog(300, () => true, overran);
    watchdog.arm(1000);
    jest.advanceTimersByTime(1000);
    watchdog.arm(undefined);
    jest.advanceTimersByTime(10_000);
    expect(overran).not.toHaveBeenCalled();
    watchdog.arm(500);
    jest.advanceTimersByTime(700);
    watchdog.arm(500);
    jest.advanceTimersByTime(700);
    expect(overran).not.toHaveBeenCalled();
    watchdog.stop();
    jest.advanceTimersByTime(10_000);
    expect(overran).not.toHaveBeenCalled();
  });
});
