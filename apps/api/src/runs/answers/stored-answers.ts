import { isEndedStatus, type CodeModeResult, type RunView } from '@codemode/contracts';
import { emptyTelemetry, failedInputResult, RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';
import { endedRunError } from '../host-results';

/**
 * The one rule for "a stored answer is final": once a run ended or parked, the answer it stored
 * is the answer of its last leg, whatever was (or was not) pushed to the caller. A run parked
 * answers its `waiting`, which carries the runId a caller waits on. Undefined while the run is
 * still requested or running.
 */
export function storedAnswer(run: RunView | null): CodeModeResult | undefined {
  if (!run?.lastResult) return undefined;
  return run.status === 'waiting' || isEndedStatus(run.status) ? run.lastResult : undefined;
}

/**
 * What a `wait` answers from its run (storedAnswer), except that a run which ended without an
 * answer of its own (lost, expired: the last one stored is the old `waiting`) is unavailable: a
 * wait on it would otherwise be told to wait again on a run that is gone.
 */
export function waitAnswerOf(run: RunView | null, replaySafe: boolean): CodeModeResult | undefined {
  const stored = storedAnswer(run);
  if (!run || !stored || run.status === 'waiting' || stored.status !== 'waiting') return stored;
  return failedInputResult(endedRunError(run.sessionId, run.runId), emptyTelemetry(), replaySafe);
}

/** SPEC §3: a wait not taken in time answers the run's last `waiting` again, without the output it already returned. */
export function waitingAgain(run: RunView | null, replaySafe: boolean): CodeModeResult {
  const last = run?.lastResult;
  if (last?.status !== 'waiting') {
    const error = run && isEndedStatus(run.status) ? endedRunError(run.sessionId, run.runId) : RUN_UNAVAILABLE_MESSAGE;
    return failedInputResult(error, emptyTelemetry(), replaySafe);
  }
  const { output: _returned, ...rest } = last;
  return rest;
}
