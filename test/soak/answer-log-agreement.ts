import { isDeepStrictEqual } from 'node:util';
import type { CodeModeResult, Event } from '@codemode/contracts';
import { NO_ANSWER_ERROR, RUN_BEING_RESUMED_ERROR, RUN_UNAVAILABLE_ERROR } from '../chaos/chaos-helpers';

/** The result a terminal event carries (`run.completed`/`run.failed`, and `run.lost` when its owner ended it). */
function recordedResult(event: Event): { status?: string; value?: unknown; error?: string; code?: string } | undefined {
  return (event.data as { result?: { status?: string; value?: unknown; error?: string; code?: string } }).result;
}

/**
 * SPEC §17 "Answers agree with the log": why an `exec`/`wait`/abort answer disagrees with the
 * terminal events its run has in the log (`undefined`: the log has no run for it), or null.
 * A `completed` answer has its `run.completed` with the same value; a `failed` one a failed
 * terminal event with the same error and code, or no run at all (a refusal that ran nothing).
 * The "did not answer … read GET …" answer reports no outcome, nor does a `wait`'s "unavailable
 * or expired. Read its outcome with GET …" on a run that has ended (its one terminal event is the
 * outcome); a bare "unavailable or expired" is what a `wait` on a run that ended without a result
 * of its own (lost, expired) is told. Nor does a `wait` told the run "is already being resumed"
 * (another wait's resume is running it): that wait did nothing, and asks again.
 */
export function answerDisagreement(answer: CodeModeResult, terminals: Event[] | undefined): string | null {
  if (answer.status === 'waiting') return null;
  if (answer.status === 'failed' && (answer.error === NO_ANSWER_ERROR || answer.error === RUN_BEING_RESUMED_ERROR)) return null;
  if (terminals === undefined) return answer.status === 'failed' ? null : 'answered completed, but the log has no run';
  if (terminals.length !== 1) return `the log has ${terminals.length} terminal events: ${terminals.map((e) => e.type).join(', ')}`;
  // A wait on a run that has ended reports no outcome of its own: it names where the outcome is (SPEC §3).
  if (answer.status === 'failed' && answer.error.startsWith(`${RUN_UNAVAILABLE_ERROR} Read its outcome with GET`)) return null;
  const [end] = terminals;
  const recorded = recordedResult(end);
  if (answer.status === 'completed') {
    if (end.type !== 'run.completed') return `answered completed, the log says ${end.type}`;
    return isDeepStrictEqual(recorded?.value, answer.value)
      ? null
      : `answered ${JSON.stringify(answer.value)}, the log says ${JSON.stringify(recorded?.value)}`;
  }
  if (end.type === 'run.completed') return `answered failed (${answer.error}), the log says run.completed`;
  if (recorded === undefined) {
    return answer.error.startsWith(RUN_UNAVAILABLE_ERROR) ? null : `answered "${answer.error}", the log says ${end.type} without a result`;
  }
  if (recorded.error === answer.error && recorded.code === answer.code) return null;
  return `answered ${answer.code ?? '-'} "${answer.error}", the log says ${end.type} ${recorded.code ?? '-'} "${recorded.error}"`;
}
