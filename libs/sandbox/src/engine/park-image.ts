import type { ParkedImage } from '@codemode/cells';
import { SandboxError } from '../errors';
import type { CellVm } from './cell-vm';
import { encodeParkedImage, GUEST_PRELUDE_VERSION, type ParkedRunState } from './parked-image';

/**
 * SPEC §12: the image of a run that just parked (its VM is idle; `CellRunRequest.parkImage`) with
 * the run's host state beside it, its compressed size then being what `maxSnapshotBytes` limits;
 * undefined when this VM cannot be captured (built from scratch, host side not lining up): the
 * run then parks in memory only.
 */
export function captureParkedImage(vm: CellVm, runId: string, state: ParkedRunState): ParkedImage | undefined {
  let captured;
  try {
    captured = vm.captureParked();
  } catch (error) {
    if (error instanceof SandboxError) return undefined;
    throw error;
  }
  const inFlight = state.ledger.calls.filter(([, method, , queued]) => !queued && method !== 'yield').map(([id]) => id);
  return {
    bytes: encodeParkedImage(runId, captured, state),
    wasmHash: captured.wasmHash,
    preludeVersion: GUEST_PRELUDE_VERSION,
    inFlight,
  };
}
