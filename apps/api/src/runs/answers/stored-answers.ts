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

/**
 * What a call answers from its run when its pushed reply may have been lost (the reply
 * subscriptions came back after a reconnect or a failover: RunReplies' gap), or undefined to keep
 * waiting for the reply or the deadline. An ended run's answer is final for either call; a parked
 * run's `waiting` is final only for an exec that may answer it: a wait's run still reads its old
 * `waiting` until its resume starts, and an `awaitResults` exec never answers `waiting`.
 */
export function answerAfterGap(
  leg: { call: 'exec' | 'wait'; restartSafe: boolean; awaitResults?: boolean },
  run: RunView | null,
): CodeModeResult | undefined {
  if (!run) return undefined;
  if (run.status === 'waiting') return leg.call === 'exec' && !leg.awaitResults ? storedAnswer(run) : undefined;
  if (!isEndedStatus(run.status)) return undefined;
  return leg.call === 'exec' ? storedAnswer(run) : waitAnswerOf(run, leg.restartSafe);
}
