import type { CellRun } from './cell-run';
import type { ParkedRunState } from './parked-image';
import type { RescuePlan } from './rescue-image';
import type { RestorePlan } from './types';

/**
 * SPEC §12: `run` (a new CellRun on the VM restored from the image) goes on from the parked run's
 * host state; timers are re-armed for what is left until their due time, answers from the log are
 * queued as if they had just arrived, in-flight calls of `plan.redo` are made again and queued
 * calls start as slots free. Platform calls keep waiting. Its next leg is a resumed leg.
 */
export function adoptParkedRun(run: CellRun, state: ParkedRunState, plan: RestorePlan): void {
  run.loadHostState(state);
  const due = new Map(state.timers);
  const answers = new Map(plan.answers.map((answer) => [answer.id, answer]));
  const redo = new Set(plan.redo);
  for (const [id, method, argsJson, queued] of state.ledger.calls) {
    const answer = answers.get(id);
    if (answer) {
      run.ledger.answer(id);
      run.inbox.push(answer);
    } else if (!queued && method === 'sleep') {
      rearmTimer(run, id, due);
    } else if (!queued && redo.has(id)) {
      run.dispatched = true;
      run.port.dispatch(id, method, argsJson, run.ledger.callNumber(id));
    }
  }
  run.flush();
}

/**
 * SPEC §10: `run` (a new CellRun on the VM restored from a rescue image) goes on from where it was:
 * the parked host state is loaded, timers re-armed for what is left, a begun leg's output and
 * journal carried over (its yields stay open), and the settlements it had not applied queued in
 * the order they arrived. Calls the host is still working on stay open: their settlements arrive
 * here as they would have there.
 */
export function adoptRescuedRun(run: CellRun, state: ParkedRunState, plan: RescuePlan): void {
  run.loadHostState(state);
  if (plan.leg) run.resumeLeg(plan.leg.output, plan.leg.journal);
  const open = new Set(run.ledger.openIds());
  const answered = new Set<string>();
  for (const answer of plan.answers) {
    if (!open.has(answer.id) || answered.has(answer.id)) continue;
    answered.add(answer.id);
    run.ledger.answer(answer.id);
    run.inbox.push(answer);
  }
  const due = new Map(state.timers);
  for (const [id, method, , queued] of state.ledger.calls) {
    if (queued || method !== 'sleep' || answered.has(id)) continue;
    rearmTimer(run, id, due);
  }
  run.flush();
}

/** A timer that was running when the image was taken goes on for what is left until its due time. */
function rearmTimer(run: CellRun, id: string, due: ReadonlyMap<string, number>): void {
  run.port.dispatch(id, 'sleep', JSON.stringify([Math.max(0, (due.get(id) ?? 0) - Date.now())]));
}
