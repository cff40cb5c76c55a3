import { keyedWaitStep, type KeyedWaitState } from './keyed-wait';

const run = (status: NonNullable<KeyedWaitState['run']>['status'], legToken: string | null, resumeToken: string | null) => ({
  status,
  legToken,
  resumeToken,
});

describe('keyedWaitStep: what a repeated wait Idempotency-Key answers', () => {
  it('answers from the log once a later leg moved the run past the first wait', () => {
    expect(keyedWaitStep({ token: 't1', answerEvent: '5-0', run: run('running', 't2', null) })).toEqual({
      kind: 'answer-event',
      eventId: '5-0',
    });
  });

  it("answers the run's own last answer when the first wait's leg parked again or ended", () => {
    for (const status of ['waiting', 'completed', 'failed', 'lost', 'expired'] as const) {
      expect([status, keyedWaitStep({ token: 't1', answerEvent: null, run: run(status, 't1', null) })]).toEqual([
        status,
        { kind: 'answer-run' },
      ]);
    }
    // A later wait's reservation does not move the answer: its leg has not begun.
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: run('waiting', 't1', 't2') })).toEqual({ kind: 'answer-run' });
  });

  it("waits for the answer while the first wait's leg runs or its reservation is held", () => {
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: run('running', 't1', null) })).toEqual({ kind: 'pending' });
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: run('waiting', 't0', 't1') })).toEqual({ kind: 'pending' });
  });

  it('lets the repeat wait in its place when the first wait never resumed the run', () => {
    // Released or lapsed reservation: neither token is the first wait's.
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: run('waiting', 't0', null) })).toEqual({ kind: 'stale' });
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: run('waiting', null, 't2') })).toEqual({ kind: 'stale' });
    // Ended without the first wait's leg (expired or lost when the wait found it).
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: run('expired', null, null) })).toEqual({ kind: 'stale' });
    expect(keyedWaitStep({ token: 't1', answerEvent: null, run: null })).toEqual({ kind: 'stale' });
  });
});
