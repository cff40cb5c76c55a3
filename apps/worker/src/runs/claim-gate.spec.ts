import { ClaimDeclinedError, ClaimGate, claimWithinMs, type ClaimAnswer } from './claim-gate';

/** A claim the test answers when it likes, counting how often it was sent. */
function pendingClaim(): {
  run: () => Promise<ClaimAnswer>;
  sent: () => number;
  answer: (a: ClaimAnswer) => void;
  fail: (e: Error) => void;
} {
  let sent = 0;
  let settle: { resolve: (a: ClaimAnswer) => void; reject: (e: Error) => void } | undefined;
  const claim = new Promise<ClaimAnswer>((resolve, reject) => (settle = { resolve, reject }));
  return {
    run: () => {
      sent += 1;
      return claim;
    },
    sent: () => sent,
    answer: (a) => settle!.resolve(a),
    fail: (e) => settle!.reject(e),
  };
}

describe('ClaimGate', () => {
  afterEach(() => jest.useRealTimers());

  it('lets a cell that ends before anything else be claimed by its end, and sends no claim after', async () => {
    jest.useFakeTimers();
    const claim = pendingClaim();
    const gate = new ClaimGate(claim.run, () => undefined, 100);
    gate.arm();
    jest.advanceTimersByTime(99);
    await expect(gate.forEnd()).resolves.toBe('fused');
    jest.advanceTimersByTime(1_000);
    expect(claim.sent()).toBe(0);
    await expect(gate.forEnd()).resolves.toBe('fused');
    await expect(gate.claimed()).rejects.toThrow('the run is claimed by its end');
    expect(claim.sent()).toBe(0);
  });

  it('claims at its first request; every request waits for that one claim, then none waits', async () => {
    const claim = pendingClaim();
    const gate = new ClaimGate(claim.run, () => undefined);
    const order: string[] = [];
    const first = gate.beforeRequest()!.then(() => order.push('first'));
    const second = gate.beforeRequest()!.then(() => order.push('second'));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(claim.sent()).toBe(1);
    claim.answer({ started: true });
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
    expect(gate.beforeRequest()).toBeUndefined();
    await expect(gate.forEnd()).resolves.toEqual({ started: true });
    expect(claim.sent()).toBe(1);
  });

  it('claims at its deadline when the cell neither asks nor ends before it', async () => {
    jest.useFakeTimers();
    const claim = pendingClaim();
    const gate = new ClaimGate(claim.run, () => undefined, 100);
    gate.arm();
    jest.advanceTimersByTime(99);
    expect(claim.sent()).toBe(0);
    jest.advanceTimersByTime(1);
    expect(claim.sent()).toBe(1);
    claim.answer({ started: true });
    await expect(gate.forEnd()).resolves.toEqual({ started: true });
  });

  it('a park claims first: the claim, not the end, decides', async () => {
    const claim = pendingClaim();
    const gate = new ClaimGate(claim.run, () => undefined);
    const parked = gate.claimed();
    claim.answer({ started: true });
    await expect(parked).resolves.toEqual({ started: true });
    await expect(gate.forEnd()).resolves.toEqual({ started: true });
    expect(claim.sent()).toBe(1);
  });

  it('a declined claim stops the cell once, and every request and the end see it declined', async () => {
    const claim = pendingClaim();
    const stopped = jest.fn();
    const gate = new ClaimGate(claim.run, stopped);
    const request = gate.beforeRequest()!;
    claim.answer({ started: false, status: 'failed' });
    await expect(request).rejects.toEqual(new ClaimDeclinedError('failed'));
    await expect(gate.beforeRequest()).rejects.toBeInstanceOf(ClaimDeclinedError);
    await expect(gate.forEnd()).resolves.toEqual({ started: false, status: 'failed' });
    expect(stopped).toHaveBeenCalledTimes(1);
  });

  it('a claim that failed (Redis gone past the budget) stops the cell, and the end gets its error', async () => {
    const claim = pendingClaim();
    const stopped = jest.fn();
    const gate = new ClaimGate(claim.run, stopped);
    const request = gate.beforeRequest()!;
    claim.fail(new Error('Redis unavailable'));
    await expect(request).rejects.toThrow('Redis unavailable');
    await expect(gate.forEnd()).rejects.toThrow('Redis unavailable');
    expect(stopped).toHaveBeenCalledTimes(1);
  });

  it('claims within 100 ms, or a quarter of a shorter budget (the API abandons a run unclaimed past its budget)', () => {
    expect([claimWithinMs(10_000), claimWithinMs(400), claimWithinMs(399), claimWithinMs(100)]).toEqual([100, 100, 99, 25]);
  });
});
