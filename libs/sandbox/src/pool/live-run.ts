import type { CellOutcome } from '@codemode/cells';
import type { CellRunRequest } from '../engine/types';
import type { ToThread } from '../thread/protocol';
import type { LegWatchdog } from './leg-watchdog';
import type { RescueTrail } from './rescue-trail';
import type { RunBridge } from './run-bridge';

/** A run/resume call waiting for one leg of a run (`PoolThread`). */
export interface Leg {
  resolve(outcome: CellOutcome): void;
  watchdog: LegWatchdog;
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

/** A run a thread holds (in a leg or parked), seen from the pool. */
export interface LiveRun {
  runId: string;
  slot: number;
  request: CellRunRequest;
  bridge: RunBridge;
  /** SPEC §10: what it would go on from on another thread. */
  rescue: RescueTrail;
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
