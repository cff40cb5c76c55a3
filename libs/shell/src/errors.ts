import { texts } from './texts';

/**
 * Thrown inside the shell library when a request cannot run; the registry turns it into a
 * `{text, details:{status:"failed"}}` answer, so `message` is exactly what the model reads.
 */
export abstract class ShellToolError extends Error {
  abstract readonly code: string;
}

/** Thrown when `command` is empty or blank. */
export class EmptyCommandError extends ShellToolError {
  readonly code = 'empty_command';
  constructor() {
    super(texts.emptyCommand);
    this.name = 'EmptyCommandError';
  }
}

/** Thrown when `awaitResults:true` meets `background:true` (SPEC §7: "cannot be detached"). */
export class CannotDetachError extends ShellToolError {
  readonly code = 'cannot_detach';
  constructor() {
    super(texts.cannotDetach);
    this.name = 'CannotDetachError';
  }
}

/** Thrown for `elevated: true` (SPEC §7): nothing runs elevated here. */
export class ElevatedExecError extends ShellToolError {
  readonly code = 'elevated_unavailable';
  constructor() {
    super(texts.elevatedUnavailable);
    this.name = 'ElevatedExecError';
  }
}

/**
 * Thrown for a `host` this service does not run commands on: a value outside SPEC §7's, or `node`
 * naming a node that is not paired (SPEC §15: `unknown node: <idOrName>`).
 */
export class ShellHostError extends ShellToolError {
  readonly code = 'unknown_host';
  constructor(message: string) {
    super(message);
    this.name = 'ShellHostError';
  }
}

/** Thrown when `workdir` resolves outside the workspace root. */
export class WorkdirOutsideWorkspaceError extends ShellToolError {
  readonly code = 'workdir_outside_workspace';
  constructor(
    readonly workdir: string,
    readonly root: string,
  ) {
    super(texts.workdirOutside(workdir, root));
    this.name = 'WorkdirOutsideWorkspaceError';
  }
}

/** Thrown when `workdir` is inside the workspace but is not an existing directory. */
export class WorkdirMissingError extends ShellToolError {
  readonly code = 'workdir_missing';
  constructor(readonly workdir: string) {
    super(texts.workdirMissing(workdir));
    this.name = 'WorkdirMissingError';
  }
}

/** Thrown when `pty:true` is asked for and util-linux `script` is not installed. */
export class PtyUnavailableError extends ShellToolError {
  readonly code = 'pty_unavailable';
  constructor() {
    super(texts.ptyUnavailable);
    this.name = 'PtyUnavailableError';
  }
}

/** Thrown when the operating system refuses to start the shell. */
export class SpawnFailedError extends ShellToolError {
  readonly code = 'spawn_failed';
  constructor(reason: string) {
    super(texts.spawnFailed(reason));
    this.name = 'SpawnFailedError';
  }
}

/** Thrown when `exec` arrives after `shutdown()` began. */
export class ShellShuttingDownError extends ShellToolError {
  readonly code = 'shutting_down';
  constructor() {
    super(texts.shuttingDown);
    this.name = 'ShellShuttingDownError';
  }
}

/** Thrown when the session is deleted (its workspace ended) while its command is still starting. */
export class SessionDeletedError extends ShellToolError {
  readonly code = 'session_deleted';
  constructor() {
    super(texts.sessionDeletedBeforeRun);
    this.name = 'SessionDeletedError';
  }
}

/** Thrown when commands must run confined and this worker's sandbox does not work (SPEC §10). */
export class ShellSandboxUnavailableError extends ShellToolError {
  readonly code = 'sandbox_unavailable';
  constructor(readonly reason: string) {
    super(texts.sandboxUnavailable(reason));
    this.name = 'ShellSandboxUnavailableError';
  }
}

/** Thrown when the session workspace uses more than `CODEMODE_WORKSPACE_MAX_BYTES` (SPEC §10). */
export class WorkspaceOverLimitError extends ShellToolError {
  readonly code = 'workspace_over_limit';
  constructor(readonly maxBytes: number) {
    super(texts.workspaceOverLimit(maxBytes));
    this.name = 'WorkspaceOverLimitError';
  }
}

/** Thrown when the session workspace holds more than `CODEMODE_WORKSPACE_MAX_FILES` entries (SPEC §10). */
export class WorkspaceOverFileLimitError extends ShellToolError {
  readonly code = 'workspace_over_file_limit';
  constructor(readonly maxFiles: number) {
    super(texts.workspaceOverFileLimit(maxFiles));
    this.name = 'WorkspaceOverFileLimitError';
  }
}

/** Rejects the measurements still waiting when the workspace walker's thread ends (shutdown or a crash). */
export class WorkspaceWalkerEndedError extends Error {
  readonly code = 'workspace_walker_ended';
  constructor() {
    super('the workspace walker thread ended before it answered');
    this.name = 'WorkspaceWalkerEndedError';
  }
}

/**
 * Thrown when a `process` call from a cell has a field of the wrong type (a `timeout` that is
 * neither a number nor an integer string). Over REST the API refuses such a body with 400; in a
 * cell the call rejects with this message, as the workspace tools' input errors do, so it is not
 * turned into an answer. `name` stays `Error`: the guest sees it.
 */
export class ProcessInputError extends Error {
  readonly code = 'invalid_input';
  constructor(
    readonly tool: string,
    readonly field: string,
    detail: string,
  ) {
    super(texts.invalidInput(tool, field, detail));
    this.name = 'Error';
  }
}
