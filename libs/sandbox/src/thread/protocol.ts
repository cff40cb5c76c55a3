import type { BridgeMethod } from '@codemode/contracts';
import type { CellOutcome, CellRunRequest, SandboxVariant } from '../engine/types';

/**
 * Messages between the pool (main thread) and a cell thread. A thread runs one cell at a time:
 * `run` → any number of `bridge`/`cancel` (thread → pool) and `settle` (pool → thread) → `done`.
 * Everything crosses as plain data; guest values only as JSON strings.
 */
export type ToThread =
  | { type: 'run'; request: CellRunRequest }
  | { type: 'settle'; runId: string; id: string; ok: boolean; payload: string };

export type FromThread =
  | { type: 'ready'; compileMs: number; instanceMs: number }
  /** The thread finished releasing its last VM and has the next one prepared. */
  | { type: 'warm' }
  | { type: 'bridge'; runId: string; id: string; method: BridgeMethod; argsJson: string }
  | { type: 'cancel'; runId: string; id: string }
  | { type: 'done'; runId: string; outcome: CellOutcome }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> };

export interface ThreadData {
  variant: SandboxVariant;
}
