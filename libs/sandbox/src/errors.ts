import { VALUE_TOO_DEEP_ERROR, type CodeModeErrorCode } from '@codemode/contracts';
import { RUN_BUSY_MESSAGE, RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';

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
