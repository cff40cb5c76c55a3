import type { CodeModeResult, RunView, SessionRef } from '@codemode/contracts';
import type { RunLedger } from '@codemode/events';
import { hostFailureResult, owedAnswerResult } from '@codemode/cells';
import { NO_ANSWER_ERROR } from './host-results';

/**
 * SPEC §16: the restartSafe leg of `runId` did not answer its `exec` or `wait` within the budget
 * plus the reply grace. While it still runs, its answer is owed to the next `wait` and the call
 * answers `waiting` with the runId; a leg that parked or ended meanwhile is answered from the run
 * (`answerOf`).
 */
export async function oweAnswer(
  runs: RunLedger,
  ref: SessionRef,
  runId: string,
  answerOf: (run: RunView | null) => CodeModeResult | undefined,
): Promise<CodeModeResult> {
  if (await runs.oweAnswer(ref, runId)) return owedAnswerResult(runId);
  return answerOf(await runs.get(ref, runId)) ?? hostFailureResult(NO_ANSWER_ERROR, 'runtime_unavailable', true);
}
