import type { ToThread } from '../thread/protocol';
import { SandboxStartError } from '../errors';
import type { Leg, LiveRun, MovedRun } from './live-run';

/** Least budget a rescued leg gets (one whose budget ran out while its thread was stuck parks at once). */
export const MIN_RESCUED_LEG_MS = 100;

/** A new cell or restore never begun starts again; otherwise a current rescue image that reflects every settlement not kept. */
export function rescuable(run: LiveRun, leg: Leg): boolean {
  if (run.starting && leg.start.type !== 'resume') return true;
  return run.rescue.current;
}

/** What the adopting thread is sent for a moved run (its slot is set there). */
export function rescueMessage({ run, leg, begun }: MovedRun): Extract<ToThread, { type: 'run' | 'restore' | 'rescue' }> {
  const start = leg.start;
  if (!begun && start.type === 'run') return start;
  // A restore or rescue never begun starts again with the settlements posted behind it, which the
  // terminated thread never read (a run moved twice would otherwise wait for them forever).
  if (!begun && (start.type === 'restore' || start.type === 'rescue')) {
    const behind = run.rescue.kept();
    if (behind.length === 0) return start;
    return start.type === 'restore'
      ? { ...start, plan: { ...start.plan, answers: [...start.plan.answers, ...behind] } }
      : { ...start, plan: { ...start.plan, answers: [...start.plan.answers, ...behind] } };
  }
  const rescue = run.rescue.image();
  if (!rescue) throw new SandboxStartError(`run ${run.runId} has no rescue image`);
  const { state, later } = rescue;
  // A begun leg goes on with what was left of its budget; a resume that never began gets all of it.
  const left = state.remainingMs - (Date.now() - state.capturedAt);
  const timeoutMs = !begun || leg.awaitResults ? leg.timeoutMs : Math.max(MIN_RESCUED_LEG_MS, left);
  const request = { ...run.request, awaitResults: leg.awaitResults, limits: { ...run.request.limits, timeoutMs } };
  const carried = begun ? { leg: { output: state.output, ...(state.journal ? { journal: state.journal } : {}) } } : {};
  return { type: 'rescue', request, slot: 0, image: rescue.image, plan: { answers: [...state.inbox, ...later], ...carried } };
}
