import type { CellOutcome } from '@codemode/cells';
import type { CellRunRequest, Settlement } from '../engine/types';
import type { RescueImage, RescueState } from '../engine/rescue-image';
import type { ToThread } from '../thread/protocol';
import type { RunBridge } from './run-bridge';

/** A run/resume call of a live run in progress on its thread (PoolThread). */
export interface Leg {
  resolve(outcome: CellOutcome): void;
  watchdog?: NodeJS.Timeout;
  deferredSince?: number;
  /** The message that started it: a new cell or restore the thread never began is started again elsewhere. */
  start: ToThread;
  timeoutMs: number;
  awaitResults: boolean;
  /**
   * SPEC §10 thread share: the leg has not yet called the host since it was posted, so its guest
   * code executes now or will once the thread begins it (the busy flag alone misses that moment).
   */
  beforeHostCall: boolean;
}

/** One run a PoolThread holds: in a leg or parked, with what a rescue needs (SPEC §10). */
export interface LiveRun {
  runId: string;
  slot: number;
  request: CellRunRequest;
  bridge: RunBridge;
  /** SPEC §10: its latest rescue image; current until the thread says `stale` or the run changes its calls. */
  rescue?: { image: RescueImage; state: RescueState };
  /** Settlements posted (numbered from 1) while the thread held other runs, not yet reflected in a rescue image. */
  unacked: { seq: number; settlement: Settlement }[];
  unackedBytes: number;
  sent: number;
  /** Settlements up to this number were not kept (over the bound): no rescue before an image reflects them. */
  droppedUpTo: number;
  /** Set while a run/resume call waits for this run; unset while parked. */
  leg?: Leg;
  discarded: boolean;
  /** Its leg was posted and the thread has not begun it yet (no message from it since). */
  starting?: boolean;
}

/** A run taken out of a terminated thread, on its way to another (`PoolThread.adopt`). */
export interface MovedRun {
  readonly run: LiveRun;
  readonly leg: Leg;
  /** The terminated thread had begun the leg. */
  readonly begun: boolean;
}
