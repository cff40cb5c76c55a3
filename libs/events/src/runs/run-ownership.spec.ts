import { RUN_STATUSES } from '@codemode/contracts';
import { strandedRunFate, unansweredLegFate } from './run-ownership';

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
