import { toStoreError } from '@codemode/events';
import { requestEntryFate } from './request-entry-fate';

/**
 * SPEC §13, `CODEMODE_CELL_DISPATCH=stream`: a request and its cell's entry leave in one socket
 * write; "a request whose entry never landed is abandoned as not started, an entry whose request
 * never landed is dropped by the worker that reads it".
 */
const ok = <T>(value: T): PromiseFulfilledResult<T> => ({ status: 'fulfilled', value });
const failed = (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason });
/** Its reply lost after the write (it may have run). */
const lost = () => toStoreError(new Error('Command timed out'));
/** Never sent (no connection). */
const unsent = () => toStoreError(new Error("Stream isn't writeable and enableOfflineQueue options is false"));

describe('requestEntryFate', () => {
  it('both landed: the run is followed to its pushed answer', () => {
    expect(requestEntryFate(ok({ created: true }), ok('1-0'))).toEqual({ kind: 'follow' });
  });

  it('a repeated Idempotency-Key answers from the first run, whatever became of the entry (it names a run never created)', () => {
    const existing = { created: false, runId: 'cm_first' } as const;
    expect(requestEntryFate(ok(existing), ok('1-0'))).toEqual({ kind: 'existing', runId: 'cm_first' });
    expect(requestEntryFate(ok(existing), failed(lost()))).toEqual({ kind: 'existing', runId: 'cm_first' });
  });

  it('settings changed since they were read: sent again (under a new run id)', () => {
    expect(requestEntryFate(ok({ created: false, settingsChanged: true }), ok('1-0'))).toEqual({ kind: 'resend' });
  });

  it('the request landed and the entry did not: abandoned with the entry’s failure, as a failed add', () => {
    const error = lost();
    expect(requestEntryFate(ok({ created: true }), failed(error))).toEqual({ kind: 'abandon', error, requested: true });
    const never = unsent();
    expect(requestEntryFate(ok({ created: true }), failed(never))).toEqual({ kind: 'abandon', error: never, requested: true });
  });

  it('the request never reached Redis: nothing was recorded, the exec fails (an entry that landed is dropped by its reader)', () => {
    const error = unsent();
    expect(requestEntryFate(failed(error), ok('1-0'))).toEqual({ kind: 'fail', error });
    expect(requestEntryFate(failed(error), failed(lost()))).toEqual({ kind: 'fail', error });
  });

  it('not a Redis failure: the exec fails with it', () => {
    const bug = new Error('unexpected reply');
    expect(requestEntryFate(failed(bug), ok('1-0'))).toEqual({ kind: 'fail', error: bug });
  });

  it('the request’s reply was lost and the entry may have landed: abandoned while requested, else the run answers', () => {
    const error = lost();
    expect(requestEntryFate(failed(error), ok('1-0'))).toEqual({ kind: 'abandon', error, requested: false });
    expect(requestEntryFate(failed(error), failed(lost()))).toEqual({ kind: 'abandon', error, requested: false });
  });

  it('the request’s reply was lost and the entry surely never left: closed with the exec’s answer, as without an entry', () => {
    const error = lost();
    expect(requestEntryFate(failed(error), failed(unsent()))).toEqual({ kind: 'close', error });
  });
});
