import type { CellOutcome } from '@codemode/cells';
import type { BridgeHost, CellRunRequest, RestorePlan } from '../engine/types';
import type { MovedRun } from './pool-thread';

/** A cell (or a restore, or a rescued run) waiting in the pool's fair queue for a thread (`SandboxPool`). */
export interface QueuedCell {
  request: CellRunRequest;
  tenant: string;
  host: BridgeHost | undefined;
  /** A parked run's image to restore instead of running the cell (SPEC §12). */
  restoring?: { image: Uint8Array; plan: RestorePlan };
  /** SPEC §10: a run in a leg taken out of a terminated thread, to go on on another. */
  moved?: MovedRun;
  timer: NodeJS.Timeout;
  resolve(outcome: CellOutcome): void;
}
