import type { ParkedImage } from '@codemode/cells';
import { SandboxError } from '../errors';
import type { CellRun } from './cell-run';
import { encodeParkedImage, GUEST_PRELUDE_VERSION, type ParkedRunState } from './parked-image';
import type { RestorePlan } from './types';

/**
 * SPEC §12: the image of a run that just parked (its VM is idle; `CellRunRequest.parkImage`), its
 * compressed size then being what `maxSnapshotBytes` limits; undefined when this VM cannot be
 * captured (built from scratch, host side not lining up): the run then parks in memory only.
 */
export function captureParkedRun(run: CellRun): ParkedImage | undefined {
  let captured;
  try {
    captured = run.vm.captureParked();
  } catch (error) {
    if (error instanceof SandboxError) return undefined;
    throw error;
  }
  const state = parkedRunState(run);
  const inFlight = state.ledger.calls.filter(([, method, , queued]) => !queued && method !== 'yield').map(([id]) => id);
  return {
    bytes: encodeParkedImage(run.cell.runId, captured, state),
    wasmHash: captured.wasmHash,
    preludeVersion: GUEST_PRELUDE_VERSION,
    inFlight,
  };
}

/** CellRun's host state an image carries beside the VM. */
export function parkedRunState(run: CellRun): ParkedRunState {
  return {
    ledger: run.ledger.state(),
    timers: run.recorder.timers(),
    dispatched: run.dispatched,
    output: run.printed.state(),
    seeded: run.cell.restartSafe === true && run.cell.seed !== undefined,
  };
}

/**
 * SPEC §12: `run` (a new CellRun on the VM restored from the image) goes on from the parked run's
 * host state; timers are re-armed for what is left until their due time, answers from the log are
 * queued as if they had just arrived, in-flight calls of `plan.redo` are made again and queued
 * calls start as slots free. Platform calls keep waiting. Its next leg is a resumed leg.
 */
export function adoptParkedRun(run: CellRun, state: ParkedRunState, plan: RestorePlan): void {
  run.started = true;
  run.dispatched = state.dispatched;
  run.ledger.load(state.ledger);
  run.printed.load(state.output);
  run.recorder.loadTimers(state.timers);
  const due = new Map(state.timers);
  const answers = new Map(plan.answers.map((answer) => [answer.id, answer]));
  const redo = new Set(plan.redo);
  for (const [id, method, argsJson, queued] of state.ledger.calls) {
    const answer = answers.get(id);
    if (answer) {
      run.ledger.answer(id);
      run.inbox.push(answer);
    } else if (!queued && method === 'sleep') {
      run.port.dispatch(id, method, JSON.stringify([Math.max(0, (due.get(id) ?? 0) - Date.now())]));
    } else if (!queued && redo.has(id)) {
      run.dispatched = true;
      run.port.dispatch(id, method, argsJson, run.ledger.callNumber(id));
    }
  }
  run.flush();
}
