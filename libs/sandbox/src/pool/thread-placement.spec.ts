import { pickThread, type PlacedThread } from './thread-placement';

function thread(name: string, fields: Partial<PlacedThread> = {}): PlacedThread & { name: string } {
  return { name, state: 'ready', legsWaitingToBegin: 0, executingGuestCode: false, activeLegs: 0, liveRuns: 0, warm: true, ...fields };
}

describe('pickThread', () => {
  it('takes only a ready thread that has begun every leg it was given', () => {
    expect(pickThread([thread('a', { state: 'starting' }), thread('b', { legsWaitingToBegin: 1 })])).toBeUndefined();
    expect(pickThread([thread('a', { state: 'dead' }), thread('b')])?.name).toBe('b');
  });

  it('prefers a thread not executing guest code, then the fewest running legs, then the fewest live runs, then a prepared VM', () => {
    expect(
      pickThread([thread('busy', { executingGuestCode: true }), thread('legs', { activeLegs: 5, liveRuns: 9, warm: false })])?.name,
    ).toBe('legs');
    expect(pickThread([thread('two', { activeLegs: 2 }), thread('one', { activeLegs: 1, liveRuns: 30 })])?.name).toBe('one');
    expect(pickThread([thread('many', { liveRuns: 3 }), thread('few', { liveRuns: 1, warm: false })])?.name).toBe('few');
    expect(pickThread([thread('cold', { warm: false }), thread('warm')])?.name).toBe('warm');
  });
});
