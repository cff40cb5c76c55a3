import { isStoreUnavailable, mayHaveRun, type RunLedger } from '@codemode/events';

type Requested = Awaited<ReturnType<RunLedger['request']>>;

/**
 * What an exec does once `request-run` and its cell's stream entry, sent in one socket write
 * (`CODEMODE_CELL_DISPATCH=stream`, SPEC §13), were answered; the reply deadline was listening
 * before either was sent:
 * - `follow`: recorded and dispatched; the run's pushed answer is the exec's.
 * - `existing`: a repeated Idempotency-Key; the first run answers. The entry names a run never
 *   created: it is withdrawn, and a worker that read it first drops it.
 * - `resend`: the session was configured since its settings were read; sent again under a new run
 *   id, so this entry names a run never created either (withdrawn too).
 * - `abandon`: the run may exist with no entry that will run it (the entry failed), or the request
 *   failed after it may have landed and the entry may have landed too (a worker may run the cell):
 *   abandoned with the store-failure answer while still `requested`, else its own answer comes.
 *   `requested`: the request's reply was read (the run exists).
 * - `close`: the request may have landed, the entry surely did not: closed with the answer the
 *   exec gets (`error`'s), which nothing can contradict.
 * - `fail`: nothing was recorded (or not a Redis failure: a bug); `error` is the exec's.
 */
export type RequestEntryFate =
  | { kind: 'follow' }
  | { kind: 'existing'; runId: string }
  | { kind: 'resend' }
  | { kind: 'abandon'; error: unknown; requested: boolean }
  | { kind: 'close'; error: unknown }
  | { kind: 'fail'; error: unknown };

/** The fate of a request and its entry from their settled replies (see RequestEntryFate). */
export function requestEntryFate(requested: PromiseSettledResult<Requested>, entry: PromiseSettledResult<unknown>): RequestEntryFate {
  if (requested.status === 'rejected') {
    const error: unknown = requested.reason;
    if (!isStoreUnavailable(error) || !mayHaveRun(error)) return { kind: 'fail', error };
    const entryMayHaveLanded = entry.status === 'fulfilled' || mayHaveRun(entry.reason);
    return entryMayHaveLanded ? { kind: 'abandon', error, requested: false } : { kind: 'close', error };
  }
  const reply = requested.value;
  if ('settingsChanged' in reply) return { kind: 'resend' };
  if (!reply.created) return { kind: 'existing', runId: reply.runId };
  return entry.status === 'fulfilled' ? { kind: 'follow' } : { kind: 'abandon', error: entry.reason, requested: true };
}
