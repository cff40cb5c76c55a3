import { VALUE_TOO_DEEP_ERROR, type CodeModeErrorCode } from '@codemode/contracts';

/** SPEC §3 strings the executor reports verbatim. */
export const TIMEOUT_MESSAGE = 'code mode timeout exceeded';
export const MODULE_ACCESS_MESSAGE = 'code mode module access is disabled.';
export const PENDING_WITHOUT_HOST_WORK_MESSAGE = 'code mode promise is pending without host work';
/** SPEC §3: requests that may wait for an in-flight slot, per run. */
export const MAX_QUEUED_BRIDGE_REQUESTS = 128;
/** SPEC §3: a request past the bridge queue fails the cell (`invalid_input`, phase `guest`). */
export function bridgeQueueLimitMessage(maxPendingToolCalls: number): string {
  return (
    `code mode bridge queue limit exceeded (${MAX_QUEUED_BRIDGE_REQUESTS} ordinary requests queued; ${maxPendingToolCalls} in-flight slots). ` +
    'Await smaller batches before creating more tool calls or timers.'
  );
}
/** SPEC §3: how unbounded recursion fails a cell (QuickJS itself says `InternalError: stack overflow`). */
export const STACK_OVERFLOW_TEXT = 'RangeError: Maximum call stack size exceeded';
export const NOT_STARTED_MESSAGE = 'no worker started the cell within its budget; it was not run.';
export const SET_TIMEOUT_DELAY_MESSAGE = 'setTimeout delay must be a non-negative finite number.';
export const TOO_MANY_SUSPENDED_MESSAGE = 'too many suspended code mode runs.';
export const SNAPSHOT_LIMIT_MESSAGE = 'code mode snapshot limit exceeded';
export const ABORTED_MESSAGE = 'code mode execution aborted';
export const RUN_UNAVAILABLE_MESSAGE = 'code mode run is unavailable or expired.';
export const RUN_BUSY_MESSAGE = 'code mode run is already being resumed.';
/** SPEC §5: a restartSafe cell called an MCP/namespace tool (never dispatched). */
export const RESTART_SAFE_NAMESPACE_MESSAGE = 'restart-safe code mode cannot call namespace tools.';
/** SPEC §5: a restartSafe cell called any other surface that is not replay-safe (never dispatched). */
export const RESTART_SAFE_SURFACE_MESSAGE =
  'restart-safe code mode cannot call tool surfaces that are not proven replay-safe; use audited read, grep, or find tools.';
/** Prefix of the TypeError a `store`/`results.save` value that JSON cannot represent rejects with. */
export const VALUE_NOT_SERIALIZABLE_PREFIX = 'code mode value is not JSON-serializable: ';
/** An in-flight leg whose thread the watchdog terminated for another run's overrun. */
/** SPEC §6: a replay that does not retrace its log fails the run; the detail names the first difference. */
export const REPLAY_DIVERGED_PREFIX = 'code mode replay diverged from the recorded run';
export function replayDivergedMessage(detail: string): string {
  return `${REPLAY_DIVERGED_PREFIX}: ${detail}; start a new run.`;
}
export const THREAD_LOST_MESSAGE = 'code mode sandbox thread was terminated; the run was lost.';

/** Base of every error the sandbox library throws; `code` is the SPEC error code it maps to. */
export abstract class SandboxError extends Error {
  abstract readonly code: CodeModeErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Thrown when a run is submitted to a pool that is closing or closed. */
export class SandboxPoolClosedError extends SandboxError {
  readonly code = 'runtime_unavailable' as const;
  constructor() {
    super('the sandbox pool is closed');
  }
}

/** Thrown when a sandbox thread cannot start (bad script path, wasm failed to load). */
export class SandboxStartError extends SandboxError {
  readonly code = 'runtime_unavailable' as const;
}

/**
 * Thrown inside a thread when the host side of a QuickJS instance failed (a host exception
 * unwound through the wasm, a handle was misused): the instance must be discarded, never reused.
 */
export class SandboxEngineError extends SandboxError {
  readonly code = 'internal_error' as const;
}

/**
 * Thrown when a VM image cannot be captured (the VM holds state the image cannot re-wrap) or
 * restored (another wasm binary, a memory cap below the image's size, host functions that do not
 * line up): the caller builds its VM from scratch instead.
 */
export class VmImageError extends SandboxError {
  readonly code = 'internal_error' as const;
}

/** Thrown when the guest broke the bridge protocol (unknown method, unknown request id). */
export class BridgeProtocolError extends SandboxError {
  readonly code = 'internal_error' as const;
}

/** Rejects a bridge call whose method has no host to answer it in this run. */
export class BridgeUnavailableError extends SandboxError {
  readonly code = 'internal_error' as const;
  constructor(method: string) {
    super(`code mode bridge method ${method} is not available in this run`);
    this.name = 'Error';
  }
}

/**
 * Rejects a bridge call whose value (a tool's input, a stored value, …) nests deeper than SPEC §10
 * allows; named like the guest's own serialization errors, since the guest sees the name.
 */
export class ValueTooDeepError extends SandboxError {
  readonly code = 'invalid_input' as const;
  constructor() {
    super(VALUE_TOO_DEEP_ERROR);
    this.name = 'TypeError';
  }
}

/** Thrown by `SandboxPool.resume`/`settle` when no run with that id is parked in this pool. */
export class ParkedRunNotFoundError extends SandboxError {
  readonly code = 'invalid_input' as const;
  constructor(readonly runId: string) {
    super(RUN_UNAVAILABLE_MESSAGE);
  }
}

/** Thrown by `SandboxPool.resume` when the run is already being resumed. */
export class ParkedRunBusyError extends SandboxError {
  readonly code = 'invalid_input' as const;
  constructor(readonly runId: string) {
    super(RUN_BUSY_MESSAGE);
  }
}

/** Thrown by `SandboxPool.settle` for an id that is not an unsettled platform-answered call of the run. */
export class UnknownBridgeCallError extends SandboxError {
  readonly code = 'invalid_input' as const;
  constructor(
    readonly runId: string,
    readonly callId: string,
  ) {
    super(`code mode run ${runId} has no unsettled platform call ${callId}`);
  }
}
