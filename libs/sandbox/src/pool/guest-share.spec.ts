import { GuestThreadShare } from './guest-share';
import type { PoolThread } from './pool-thread';

/** A thread as the share reads it: the runs holding its guest time. */
function thread(...runIds: string[]): PoolThread {
  return { guestRunIds: () => runIds } as unknown as PoolThread;
}

describe('GuestThreadShare', () => {
  const parked = new Map<string, string>([['parked-1', 'acme']]);

  it('counts the threads whose executing or not-yet-begun leg is the tenant’s, parked runs by their tenant', () => {
    const share = new GuestThreadShare(
      (runId) => parked.get(runId),
      () => 2,
      4,
    );
    share.legStarted('cell-1', 'acme');
    const threads = [thread('cell-1'), thread('parked-1'), thread(), thread('other')];
    expect(share.mayTake('acme', threads)).toBe(false);
    expect(share.mayTake('zeta', threads)).toBe(true);
    share.legEnded('cell-1');
    expect(share.mayTake('acme', threads)).toBe(true);
  });

  it('a thread terminated for a tenant’s overrun, and its replacement until ready, stay that tenant’s', () => {
    const share = new GuestThreadShare(
      () => undefined,
      () => 1,
      2,
    );
    const dead = thread();
    share.legStarted('stuck', 'acme');
    share.overran(dead, 'stuck');
    share.legEnded('stuck');
    expect(share.mayTake('acme', [dead, thread()])).toBe(false);
    const culprit = share.gone(dead);
    expect(culprit).toBe('acme');
    const replacement = thread();
    share.replacing(replacement, culprit!);
    expect(share.mayTake('acme', [replacement, thread()])).toBe(false);
    share.ready(replacement);
    expect(share.mayTake('acme', [replacement, thread()])).toBe(true);
  });

  it('no share, or a share of every thread, bounds nothing', () => {
    const busy = [thread('a'), thread('b')];
    const unbounded = new GuestThreadShare(
      () => 'acme',
      () => undefined,
      2,
    );
    expect(unbounded.mayTake('acme', busy)).toBe(true);
    const whole = new GuestThreadShare(
      () => 'acme',
      () => 2,
      2,
    );
    expect(whole.mayTake('acme', busy)).toBe(true);
  });
});
