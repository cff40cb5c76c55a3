import type { CodeModeOutput, LegJournal } from '@codemode/contracts';
import type { CellRun } from './cell-run';
import { SandboxError } from '../errors';
import type { ParkedRunState } from './parked-image';
import type { Settlement } from './types';
import type { VmImage } from './vm-image';

/**
 * A run's VM and host state as a parked image holds them, but neither encoded nor compressed: it
 * only crosses from a sandbox thread to the pool and back to another thread of the same process
 * (same binary), and it is taken at every switch between runs, so it must be cheap.
 */
export interface RescueImage {
  vm: VmImage;
  run: ParkedRunState;
}

/**
 * SPEC §10 (sandbox threads): what a run in a leg carries beside its VM's image so that, if its
 * thread must be terminated for another run's overrun, the pool can rebuild it on another thread
 * exactly where it was: the parts of `CellRun` a park does not keep.
 */
export interface RescueState {
  /** Output this leg printed and has not handed out yet. */
  output: CodeModeOutput[];
  /** restartSafe runs: the journal of the leg so far. */
  journal?: LegJournal;
  /** Settlements that reached the run and wait to be applied, in arrival order. */
  inbox: Settlement[];
  /** What was left of the leg's budget at the capture. */
  remainingMs: number;
  /** Epoch ms of the capture. */
  capturedAt: number;
  /** How many settle messages the run had received when captured (the pool resends the later ones). */
  received: number;
}

/**
 * How a rescued run goes on: settlements to apply in arrival order, and, when its leg had begun,
 * what that leg had so far (without it the run was parked and its resumed leg starts afresh).
 */
export interface RescuePlan {
  answers: Settlement[];
  leg?: { output: CodeModeOutput[]; journal?: LegJournal };
}

/** The image and state of an idle run; undefined when its VM cannot be captured (built from scratch). */
export function captureRunForRescue(run: CellRun, received: number): { image: RescueImage; state: RescueState } | undefined {
  let vm: VmImage;
  try {
    vm = run.vm.captureParked();
  } catch (error) {
    if (error instanceof SandboxError) return undefined;
    throw error;
  }
  return { image: { vm, run: run.hostState() }, state: { ...run.legState(), capturedAt: Date.now(), received } };
}
