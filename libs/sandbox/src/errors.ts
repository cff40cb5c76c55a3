import type { CodeModeErrorCode } from '@codemode/contracts';

/** SPEC §3 strings the executor reports verbatim. */
export const TIMEOUT_MESSAGE = 'code mode timeout exceeded';
export const MODULE_ACCESS_MESSAGE = 'code mode module access is disabled.';
export const PENDING_WITHOUT_HOST_WORK_MESSAGE = 'code mode promise is pending without host work';
export const TOO_MANY_PENDING_MESSAGE = 'too many pending code mode tool calls';
export const NOT_STARTED_MESSAGE = 'no worker started the cell within its budget; it was not run.';
export const SET_TIMEOUT_DELAY_MESSAGE = 'setTimeout delay must be a non-negative finite number.';

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
