import type { BridgeMethod } from '@codemode/contracts';
import type { CellOutcome } from '@codemode/cells';
import type { RescueImage, RescuePlan, RescueState } from '../engine/rescue-image';
import type { CellRunRequest, RestorePlan, SandboxVariant } from '../engine/types';

/**
 * Messages between the pool (main thread) and a cell thread. A thread holds several live runs
 * (running legs and parked VMs) but executes one VM at a time. Per run: `run` → any number of
 * `bridge`/`cancel`/`watch` (thread → pool) and `settle`/`platform` (pool → thread) → `done`;
 * a `done` with a waiting outcome keeps the VM parked in the thread until `resume` or `discard`.
 * Everything crosses as plain data; guest values only as JSON strings.
 */
export type ToThread =
  | { type: 'run'; request: CellRunRequest; slot: number }
  /** A parked run from its image (SPEC §12): restored into a new VM, then resumed (a leg of `request.limits.timeoutMs`). */
  | { type: 'restore'; request: CellRunRequest; slot: number; image: Uint8Array; plan: RestorePlan }
  /** A run whose thread was terminated under it (SPEC §10), from its rescue image: its leg goes on here. */
  | { type: 'rescue'; request: CellRunRequest; slot: number; image: RescueImage; plan: RescuePlan }
  | { type: 'resume'; runId: string; timeoutMs: number; awaitResults: boolean }
  | { type: 'settle'; runId: string; id: string; ok: boolean; payload: string }
  /** The call is answered only by the platform (through `SandboxPool.settle`). */
  | { type: 'platform'; runId: string; id: string }
  /** The call waits for a decision (SPEC §11): it gives up its slot (`CallGate.hold`). */
  | { type: 'hold'; runId: string; id: string }
  /** The held call was approved: admit it again when a slot is free (`CallGate.resume`). */
  | { type: 'unhold'; runId: string; id: string }
  | { type: 'discard'; runId: string };

export type FromThread =
  | { type: 'ready'; compileMs: number; instanceMs: number }
  /** The thread has its next VM prepared. */
  | { type: 'warm' }
  | { type: 'bridge'; runId: string; id: string; method: BridgeMethod; argsJson: string; callNumber?: number }
  /** Bridge calls made in one stretch of guest execution, in order (cell-thread's `postCalls`). */
  | { type: 'bridges'; calls: { type: 'bridge'; runId: string; id: string; method: BridgeMethod; argsJson: string; callNumber?: number }[] }
  | { type: 'cancel'; runId: string; id: string }
  /** A held call holds a slot again: its host may dispatch it now. */
  | { type: 'admitted'; runId: string; id: string }
  /** The run's leg spends budget for `timeoutMs` from now (arm its watchdog); undefined disarms it. */
  | { type: 'watch'; runId: string; timeoutMs?: number }
  | { type: 'done'; runId: string; outcome: CellOutcome }
  /** The run was rebuilt from its log; its live leg (with a budget of its own) starts now. */
  | { type: 'replayed'; runId: string }
  /**
   * SPEC §10: the run is idle in a leg and another run's guest code is about to execute here; if
   * that one overruns and the thread is terminated, this image and state rebuild the run elsewhere.
   */
  | { type: 'rescue'; runId: string; image: RescueImage; state: RescueState }
  /** The run's guest code executes again: its last rescue image no longer holds. */
  | { type: 'stale'; runId: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> };

export interface ThreadData {
  variant: SandboxVariant;
  /** The catalog whose tool handles the thread's boot image holds prepared (`SandboxPoolOptions.preparedCatalogJson`). */
  preparedCatalogJson?: string;
  /**
   * One Int32: the slot of the run whose guest code the thread is executing right now (0: none).
   * The pool's watchdog reads it to blame the run that actually overran, not one waiting behind it.
   */
  busy: SharedArrayBuffer;
}
