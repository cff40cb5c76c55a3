import { RUN_STATUSES, type RunStatus } from '@codemode/contracts';
import { lapsedLegFate, RunOwnership, strandedRunFate, unansweredLegFate } from './run-ownership';

describe('strandedRunFate: a run whose answer was due a lease ago', () => {
  it('abandons a run still requested, whatever its owner', () => {
    expect([strandedRunFate('requested', false, false), strandedRunFate('requested', true, true)]).toEqual(['abandon', 'abandon']);
  });

  it('loses a running run whose owner is gone, and looks again at one whose owner is alive', () => {
    expect(strandedRunFate('running', true, false)).toBe('lose');
    expect(strandedRunFate('running', false, false)).toBe('postpone');
    expect(strandedRunFate('running', false, true)).toBe('postpone');
  });

  it('rebuilds by replay a replay-safe running run whose owner is gone (SPEC §16), never loses it', () => {
    expect(strandedRunFate('running', true, true)).toBe('replay');
  });

  it('forgets every other run: ended, parked, or gone', () => {
    const others = RUN_STATUSES.filter((s) => s !== 'requested' && s !== 'running');
    expect(others.length).toBeGreaterThan(4);
    for (const status of [...others, null]) expect([status, strandedRunFate(status, true, true)]).toEqual([status, 'forget']);
  });
});

describe('unansweredLegFate: a leg that did not answer its exec or wait within budget plus grace (SPEC §16)', () => {
  it('a restartSafe leg is rebuilt when its worker is gone, and owed to the next wait either way', () => {
    expect(unansweredLegFate({ status: 'running', restartSafe: true }, true)).toBe('rebuild');
    expect(unansweredLegFate({ status: 'running', restartSafe: true }, false)).toBe('owe');
  });

  it('any other leg is lost when its worker is gone, else answered runtime_unavailable', () => {
    expect(unansweredLegFate({ status: 'running', restartSafe: false }, true)).toBe('lose');
    expect(unansweredLegFate({ status: 'running', restartSafe: false }, false)).toBe('fail');
  });

  it('a run that is not running (requested, parked, ended, gone) is never rebuilt, owed or lost here', () => {
    for (const status of RUN_STATUSES.filter((s) => s !== 'running'))
      for (const restartSafe of [true, false]) expect([status, unansweredLegFate({ status, restartSafe }, true)]).toEqual([status, 'fail']);
    expect(unansweredLegFate(null, true)).toBe('fail');
  });
});

describe('lapsedLegFate: a leg in the index of a worker whose lease lapsed (SPEC §17)', () => {
  const now = 1_000_000;
  const leg = (over: Partial<{ status: RunStatus; owner: string | null; restartSafe: boolean }> = {}) => ({
    status: 'running' as RunStatus,
    owner: 'w-dead',
    restartSafe: true,
    ...over,
  });

  it('rebuilds a replay-safe leg still running under the lapsed owner at once, answering its caller', () => {
    expect(lapsedLegFate(leg(), 'w-dead', now + 1, now)).toBe('rebuild');
  });

  it('owes the answer to the next wait once its caller has answered or given up, then rebuilds', () => {
    expect(lapsedLegFate(leg(), 'w-dead', now, now)).toBe('rebuild-owed');
    expect(lapsedLegFate(leg(), 'w-dead', now - 5000, now)).toBe('rebuild-owed');
  });

  it('forgets an entry whose run moved on: taken over, released, not replay-safe, not running, gone', () => {
    expect(lapsedLegFate(leg({ owner: 'w-other' }), 'w-dead', now + 1, now)).toBe('forget');
    expect(lapsedLegFate(leg({ owner: '' }), 'w-dead', now + 1, now)).toBe('forget');
    expect(lapsedLegFate(leg({ restartSafe: false }), 'w-dead', now + 1, now)).toBe('forget');
    for (const status of RUN_STATUSES.filter((s) => s !== 'running'))
      expect([status, lapsedLegFate(leg({ status }), 'w-dead', now + 1, now)]).toEqual([status, 'forget']);
    expect(lapsedLegFate(null, 'w-dead', now + 1, now)).toBe('forget');
  });
});

describe('RunOwnership.lapsed: whose legs a worker rebuilds', () => {
  const presence = { isAlive: (workerId: string) => Promise.resolve(workerId === 'w-live') };
  const ownership = new RunOwnership(presence, { workerId: 'w-self', holds: () => false });

  it('an owner whose lease is gone, never a live one and never the asking worker itself', async () => {
    expect(await Promise.all(['w-dead', 'w-live', 'w-self'].map((owner) => ownership.lapsed(owner)))).toEqual([true, false, false]);
  });
});
