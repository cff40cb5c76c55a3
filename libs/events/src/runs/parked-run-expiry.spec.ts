import { expiryStep, ParkedRunExpiry, type ExpiringRun } from './parked-run-expiry';

const ref = { tenant: 't', sessionId: 's' };
const run = (expiresAt: number | string | null, owner = 'w1'): ExpiringRun => ({ ref, runId: 'r1', epoch: 3, owner, expiresAt });

describe('expiryStep: who ends a parked run past its term', () => {
  it('nobody before its term', () => {
    for (const asker of ['holder', 'wait', 'sweep'] as const) expect(expiryStep(false, asker, true)).toBe('not-due');
  });

  it('a sweep leaves a due run to its live holder, and ends one whose holder is gone', () => {
    expect(expiryStep(true, 'sweep', false)).toBe('left-to-holder');
    expect(expiryStep(true, 'sweep', true)).toBe('end');
  });

  it('the holder and a wait end a due run themselves', () => {
    expect([expiryStep(true, 'holder', false), expiryStep(true, 'wait', false)]).toEqual(['end', 'end']);
  });
});

describe('ParkedRunExpiry', () => {
  const setup = (gone: boolean, endsIt = true) => {
    const expired: { runId: string; epoch: number }[] = [];
    const looked: string[] = [];
    const expiry = new ParkedRunExpiry(
      { expire: (r) => Promise.resolve(expired.push({ runId: r.runId, epoch: r.epoch }) > 0 && endsIt) },
      { ownerGone: (r) => Promise.resolve(looked.push(r.owner ?? '') > 0 && gone) },
    );
    return { expiry, expired, looked };
  };

  it('ends a due run fenced by the epoch the asker saw, reading an ISO or an epoch-ms expiry alike', async () => {
    const { expiry, expired } = setup(true);
    expect(await expiry.settle(run('2026-01-01T00:00:00.000Z'), 'wait', Date.parse('2026-01-01T00:00:00.000Z'))).toEqual({
      step: 'end',
      ended: true,
    });
    expect(await expiry.settle(run(1_000), 'holder', 1_000)).toEqual({ step: 'end', ended: true });
    expect(expired).toEqual([
      { runId: 'r1', epoch: 3 },
      { runId: 'r1', epoch: 3 },
    ]);
  });

  it('writes nothing before the term, and asks about the holder only for a sweep of a due run', async () => {
    const { expiry, expired, looked } = setup(false);
    expect(await expiry.settle(run(2_000), 'sweep', 1_999)).toEqual({ step: 'not-due', ended: false });
    expect(await expiry.settle(run(2_000), 'wait', 2_000)).toEqual({ step: 'end', ended: true });
    expect(await expiry.settle(run(2_000, 'w-live'), 'sweep', 2_000)).toEqual({ step: 'left-to-holder', ended: false });
    expect(looked).toEqual(['w-live']);
    expect(expired).toHaveLength(1);
  });

  it('answers not ended when the fenced write finds the run moved on', async () => {
    const { expiry } = setup(true, false);
    expect(await expiry.settle(run(0), 'sweep', 1)).toEqual({ step: 'end', ended: false });
  });
});
