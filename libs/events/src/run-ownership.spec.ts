import { RUN_STATUSES } from '@codemode/contracts';
import { strandedRunFate } from './run-ownership';

describe('strandedRunFate: a run whose answer was due a lease ago', () => {
  it('abandons a run still requested, whatever its owner', () => {
    expect([strandedRunFate('requested', false), strandedRunFate('requested', true)]).toEqual(['abandon', 'abandon']);
  });

  it('loses a running run whose owner is gone, and looks again at one whose owner is alive', () => {
    expect(strandedRunFate('running', true)).toBe('lose');
    expect(strandedRunFate('running', false)).toBe('postpone');
  });

  it('forgets every other run: ended, parked, or gone', () => {
    const others = RUN_STATUSES.filter((s) => s !== 'requested' && s !== 'running');
    expect(others.length).toBeGreaterThan(4);
    for (const status of [...others, null]) expect([status, strandedRunFate(status, true)]).toEqual([status, 'forget']);
  });
});
