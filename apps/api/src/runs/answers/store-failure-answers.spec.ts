import { ReplyError } from 'ioredis';
import { StoreCommandError, toStoreError } from '@codemode/events';
import { NO_ANSWER_ERROR } from '../host-results';
import { atReach, CallStoreFailure, reaching, storeFailureAnswer, storeFailureOf, type CallReach } from './store-failure-answers';

const STORE_FULL = 'code mode store is full (Redis refused the write for memory); retry later or ask the operator to free memory.';
const NOT_RUN = 'code mode store is unavailable (Redis did not answer); the cell was not run. Retry in a few seconds.';

/** What ioredis throws: a write refused for memory, a command that timed out, one never sent (no connection). */
const full = (): Error => toStoreError(new ReplyError("OOM command not allowed when used memory > 'maxmemory'."));
const timedOut = (): Error => toStoreError(new Error('Command timed out'));
const neverSent = (): Error => toStoreError(new Error("Stream isn't writeable and enableOfflineQueue options is false"));

const errorOf = (reach: CallReach, failure: Error): string => {
  const answer = storeFailureAnswer(failure, reach, true);
  return answer.status === 'failed' ? `${answer.code} ${answer.error}` : answer.status;
};

describe('storeFailureAnswer: what exec/wait answer when Redis fails them (SPEC §2, §17)', () => {
  it('nothing of the call ran: the store text, full or unavailable, which says to retry', () => {
    expect(errorOf('nothing-run', full())).toBe(`runtime_unavailable ${STORE_FULL}`);
    expect(errorOf('nothing-run', timedOut())).toBe(`runtime_unavailable ${NOT_RUN}`);
    expect(errorOf('nothing-run', neverSent())).toBe(`runtime_unavailable ${NOT_RUN}`);
  });

  it('the command that queues, resumes or ends the run failed: the store text only when it never reached Redis', () => {
    expect(errorOf('sending', neverSent())).toBe(`runtime_unavailable ${NOT_RUN}`);
    // Refused for memory or timed out, it may have landed (in part): the run may run, its outcome is not this call's to say.
    expect(errorOf('sending', full())).toBe(`runtime_unavailable ${NO_ANSWER_ERROR}`);
    expect(errorOf('sending', timedOut())).toBe(`runtime_unavailable ${NO_ANSWER_ERROR}`);
  });

  it('the cell was queued or its resume routed: never "store is full", always the text that reports no outcome', () => {
    for (const failure of [full(), timedOut(), neverSent()])
      expect(errorOf('sent', failure)).toBe(`runtime_unavailable ${NO_ANSWER_ERROR}`);
  });

  it('keeps the call’s replay-safety and answers as the host', () => {
    expect(storeFailureAnswer(full(), 'sent', false)).toMatchObject({ status: 'failed', failurePhase: 'host', replaySafe: false });
  });
});

describe('reaching / storeFailureOf: the innermost step that knows how far the call got names it', () => {
  it('a failure no step named happened before anything ran', () => {
    expect(storeFailureOf(full(), false)?.answer).toMatchObject({ error: STORE_FULL });
  });

  it('a named step gives its reach; an outer step does not overwrite it', async () => {
    const inner = reaching('nothing-run', () => Promise.reject(full()));
    const outer = await reaching('sent', () => inner).catch((error: unknown) => error);
    expect(outer).toBeInstanceOf(CallStoreFailure);
    expect(storeFailureOf(outer, false)?.answer).toMatchObject({ error: STORE_FULL });
    const sent = await reaching('sent', () => Promise.reject(full())).catch((error: unknown) => error);
    expect(storeFailureOf(sent, false)).toMatchObject({ answer: { error: NO_ANSWER_ERROR }, cause: expect.any(Error) });
  });

  it('anything but Redis failing passes through unnamed, and is no store failure (a bug, rethrown)', async () => {
    const bug = new Error('a bug');
    expect(atReach(bug, 'sent')).toBe(bug);
    await expect(reaching('sent', () => Promise.reject(bug))).rejects.toBe(bug);
    expect(storeFailureOf(bug, false)).toBeNull();
    expect(storeFailureOf(new StoreCommandError(new Error('ERR unknown command')), false)).toBeNull();
  });
});
