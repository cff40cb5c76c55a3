import type { RunStatus } from '@codemode/contracts';

/**
 * A `wait` Idempotency-Key already used (SPEC §2): what its record says and the state of the run
 * it names. `legToken` is the token of the wait whose leg the run last ran (resume-run);
 * `resumeToken` that of the wait holding a reservation on it (reserve-resume).
 */
export interface KeyedWaitState {
  /** The token of the first wait with the key. */
  token: string;
  /** The stream id of the first wait's answer, once a later leg moved the run past it. */
  answerEvent: string | null;
  run: { status: RunStatus; legToken: string | null; resumeToken: string | null } | null;
}

/** What a repeated key does next. */
export type KeyedWaitStep =
  /** The first wait's answer is the result of this event. */
  | { kind: 'answer-event'; eventId: string }
  /** The run's own last answer is the first wait's: its leg ended (parked again or ended). */
  | { kind: 'answer-run' }
  /** The first wait's leg is reserved or running: its answer is still to come. */
  | { kind: 'pending' }
  /** The first wait never resumed the run (refused, released, its API died first): this call waits in its place. */
  | { kind: 'stale' };

/** Decides a repeated wait key from its record and its run; the one owner of that rule. */
export function keyedWaitStep(state: KeyedWaitState): KeyedWaitStep {
  if (state.answerEvent) return { kind: 'answer-event', eventId: state.answerEvent };
  const { run } = state;
  if (!run) return { kind: 'stale' };
  if (run.legToken === state.token) return run.status === 'running' ? { kind: 'pending' } : { kind: 'answer-run' };
  if (run.resumeToken === state.token && run.status === 'waiting') return { kind: 'pending' };
  return { kind: 'stale' };
}
