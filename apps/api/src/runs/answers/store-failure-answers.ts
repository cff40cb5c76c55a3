import type { CodeModeResult } from '@codemode/contracts';
import { isStoreUnavailable, mayHaveRun } from '@codemode/events';
import { hostFailureResult } from '@codemode/cells';
import { NO_ANSWER_ERROR, storeFailureError } from '../host-results';

/** How far an `exec` or a `wait` got when Redis failed it (full, or not answering). */
export type CallReach =
  /** Nothing that can run, resume or end the run was sent; or what the call recorded is closed with this very answer. */
  | 'nothing-run'
  /** The command that queues the cell, routes the resume or ends the run failed: it did so only if it may have reached Redis. */
  | 'sending'
  /** The cell was queued, its resume routed or the run ended by this call: its outcome may be in the log, or be written later. */
  | 'sent';

/**
 * SPEC §2 and §17, the one rule for what `exec`/`wait` answer when Redis fails them: the store's
 * own "full"/"unavailable … retry" text only while that is true, i.e. nothing of the call ran;
 * once the run may have started, resumed or ended, the "did not answer … read GET …" text of §3,
 * which reports no outcome, so the answer never contradicts the end the worker writes once Redis
 * accepts writes again.
 */
export function storeFailureAnswer(error: unknown, reach: CallReach, replaySafe: boolean): CodeModeResult {
  const outcomeMayExist = reach === 'sent' || (reach === 'sending' && mayHaveRun(error));
  return hostFailureResult(outcomeMayExist ? NO_ANSWER_ERROR : storeFailureError(error), 'runtime_unavailable', replaySafe);
}

/** A Redis failure of a call that got as far as `reach` (the innermost step that knows it names it). */
export class CallStoreFailure extends Error {
  constructor(
    readonly failure: unknown,
    readonly reach: CallReach,
  ) {
    super(`Redis failed a call that reached '${reach}'`, { cause: failure });
    this.name = 'CallStoreFailure';
  }
}

/** `failure` as a CallStoreFailure at `reach` when it is Redis failing (full or away); anything else unchanged. */
export function atReach(failure: unknown, reach: CallReach): unknown {
  return isStoreUnavailable(failure) ? new CallStoreFailure(failure, reach) : failure;
}

/** Runs one step of a call, naming how far the call got if Redis fails it; a failure an inner step named keeps its reach. */
export async function reaching<T>(reach: CallReach, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw atReach(error, reach);
  }
}

/**
 * What the call answers for a failure of its steps: null when it is not Redis failing (a bug,
 * rethrown by the caller). A failure no step named happened before anything ran.
 */
export function storeFailureOf(error: unknown, replaySafe: boolean): { answer: CodeModeResult; cause: unknown } | null {
  if (error instanceof CallStoreFailure)
    return { answer: storeFailureAnswer(error.failure, error.reach, replaySafe), cause: error.failure };
  if (!isStoreUnavailable(error)) return null;
  return { answer: storeFailureAnswer(error, 'nothing-run', replaySafe), cause: error };
}
