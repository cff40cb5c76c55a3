/**
 * Typed errors of the tools library. Each carries a readonly `code` hosts can match on.
 *
 * Errors a guest can see (core tools, webhook tools, MCP calls) keep `name` as `Error`, like the
 * catalog's guest-facing errors: the message is what the model reads, so it says what went wrong
 * and what to do instead, and never carries host paths, host catalog ids, endpoints or secrets.
 */
import { MAX_CLIENT_TOOLS, operatorToolLockedMessage } from '@codemode/contracts';

/** Base class of every error a tool call can surface to the guest. */
export abstract class ToolError extends Error {
  abstract readonly code: string;
  constructor(message: string) {
    super(message);
    this.name = 'Error';
  }
}

/** Thrown when a core tool's input fails validation; the message names the field. */
export class ToolInputError extends ToolError {
  readonly code = 'invalid_input';
  constructor(
    readonly toolName: string,
    readonly field: string,
    detail: string,
  ) {
    super(`Invalid ${toolName} input: ${field}: ${detail}`);
  }
}

/** Thrown when `runCoreTool` is asked for a tool it does not execute. */
export class UnknownCoreToolError extends ToolError {
  readonly code = 'unknown_tool';
  constructor(readonly toolName: string) {
    super(`Unknown workspace tool: ${toolName}. Workspace tools are read, ls, find and grep.`);
  }
}

/** Thrown when a path leaves the session workspace (`..`, an absolute path outside, or a symlink),
 * whether found while resolving it or on the descriptor actually opened. The message is the SPEC's. */
export class WorkspacePathEscapeError extends ToolError {
  readonly code = 'path_outside_workspace';
  constructor(readonly path: string) {
    super(`path escapes the workspace: ${path}`);
  }
}

/** Thrown when a path inside the workspace does not exist. */
export class WorkspacePathNotFoundError extends ToolError {
  readonly code = 'path_not_found';
  constructor(readonly path: string) {
    super(`Path not found: ${path}. Use ls or find to see what exists in the workspace.`);
  }
}

/** Thrown when a path has the wrong kind (a directory given to read, a file given to ls). */
export class WorkspacePathKindError extends ToolError {
  readonly code = 'wrong_path_kind';
  constructor(
    readonly path: string,
    readonly expected: 'file' | 'directory',
  ) {
    super(
      expected === 'file'
        ? `Is a directory: ${path}. Use ls to list it, or read a file inside it.`
        : `Not a directory: ${path}. Use read to read a file.`,
    );
  }
}

/** Thrown when `read` meets a file that is not text, is too large to load, or is not a regular
 * file at all (a FIFO, socket or device: never opened, so one planted in the workspace cannot hold
 * the worker). */
export class UnreadableFileError extends ToolError {
  readonly code = 'unreadable_file';
  constructor(
    readonly path: string,
    reason: 'binary' | 'too_large' | 'special',
    bytes: number,
    limitBytes: number,
  ) {
    super(
      reason === 'binary'
        ? `Binary file: ${path} (${bytes} bytes); read returns text only.`
        : reason === 'special'
          ? `Not a regular file: ${path} (a FIFO, socket or device); read returns regular files only.`
          : `File too large: ${path} is ${bytes} bytes, over the ${limitBytes}-byte limit of read. Use grep to find the lines you need.`,
    );
  }
}

/** Thrown when `read`'s `offset` lies past the last line. */
export class ReadOffsetError extends ToolError {
  readonly code = 'offset_out_of_range';
  constructor(
    readonly offset: number,
    readonly totalLines: number,
  ) {
    super(`Offset ${offset} is beyond end of file (${totalLines} lines total). Use an offset from 1 to ${Math.max(1, totalLines)}.`);
  }
}

/** Thrown when a grep pattern is not a valid RE2 regular expression (the syntax of ripgrep's
 * default engine: no lookaround, no backreferences). */
export class InvalidGrepPatternError extends ToolError {
  readonly code = 'invalid_pattern';
  constructor(detail: string) {
    super(`grep pattern is not a valid regular expression: ${detail}. Pass literal: true to search for the text as written.`);
  }
}

/** Thrown when a find or grep glob cannot be compiled (e.g. a class range written backwards). */
export class InvalidGlobPatternError extends ToolError {
  readonly code = 'invalid_pattern';
  constructor(
    readonly pattern: string,
    detail: string,
  ) {
    super(`glob pattern is not valid: ${pattern} (${detail}).`);
  }
}

/** Thrown when matching a call's grep regex or find/grep glob overran the call's matching budget,
 * or the pattern is too large to compile within it. The message is the SPEC's, naming the pattern
 * as the caller wrote it. */
export class PatternTooExpensiveError extends ToolError {
  readonly code = 'pattern_too_expensive';
  constructor(readonly pattern: string) {
    super(`pattern too expensive: ${pattern}`);
  }
}

/** Thrown when the file system refuses an operation (permissions, I/O); carries the errno code,
 * never the host path the raw Node error would print. */
export class WorkspaceIoError extends ToolError {
  readonly code = 'workspace_io_error';
  constructor(
    toolName: string,
    readonly errno: string,
  ) {
    super(`${toolName} could not access a workspace path (${errno}).`);
  }
}

/** Thrown when the caller aborted a core tool call (the run was aborted or expired). */
export class ToolAbortedError extends ToolError {
  readonly code = 'aborted';
  constructor(what: string) {
    super(`${what} was aborted.`);
  }
}

/**
 * SPEC §17: a call the service makes (a webhook tool, an MCP `tools/call`) that did not answer
 * within its own deadline. `callableName` is the name the guest called it by (`MCP.<server>.<tool>`
 * for an MCP tool), so the model reads which of its calls gave up.
 */
export class ToolDeadlineError extends ToolError {
  readonly code = 'tool_deadline';
  constructor(
    readonly callableName: string,
    readonly timeoutMs: number,
  ) {
    super(`tool ${callableName} did not answer within ${timeoutMs} ms.`);
  }
}

/** Codes of webhook tool failures: one per way the call can fail (past its deadline: `ToolDeadlineError`). */
export type WebhookErrorCode =
  'webhook_http_error' | 'webhook_invalid_json' | 'webhook_response_too_large' | 'webhook_unreachable' | 'aborted';

/** Thrown when a webhook client tool call fails. `status` is set for HTTP answers. */
export class WebhookToolError extends ToolError {
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Thrown when `CODEMODE_MCP_SERVERS` (or another MCP config string) is malformed. */
export class McpConfigError extends Error {
  readonly code = 'invalid_mcp_config';
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigError';
  }
}

/**
 * Thrown when a call names an MCP server that is not connected right now (configured but down or
 * reconnecting, or not configured at all); the call was not sent (SPEC §5).
 */
export class McpServerUnavailableError extends ToolError {
  readonly code = 'mcp_server_unavailable';
  constructor(readonly serverName: string) {
    super(`MCP server ${serverName} is not connected; its tools cannot be called right now.`);
  }
}

/**
 * Thrown when an MCP call fails at the protocol level (transport, server error) or was aborted;
 * past its deadline the call throws `ToolDeadlineError`.
 */
export class McpCallError extends ToolError {
  constructor(
    readonly code: 'mcp_call_failed' | 'aborted',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Thrown when an MCP tool answered with `isError: true` (SPEC §5): the call reached the server and
 * failed there. The message carries the result's text content.
 */
export class McpToolFailedError extends ToolError {
  readonly code = 'mcp_tool_error';
  constructor(
    readonly serverName: string,
    readonly toolName: string,
    detail: string,
  ) {
    super(`MCP tool ${serverName}.${toolName} failed: ${detail}`);
  }
}

/** SPEC §11: an agent key's `PUT /tools` named an operator's tool with another endpoint, schema, `replaySafe` or `idempotent`. */
export class OperatorToolLockedError extends Error {
  readonly code = 'operator_tool_locked';
  constructor(readonly toolName: string) {
    super(operatorToolLockedMessage(toolName));
    this.name = 'OperatorToolLockedError';
  }
}

/** An agent key's tools and the operator's it keeps are more than one session holds. */
export class TooManyClientToolsError extends Error {
  readonly code = 'too_many_client_tools';
  constructor(readonly operatorTools: number) {
    super(`tools: a session holds at most ${MAX_CLIENT_TOOLS} client tools, the ${operatorTools} an operator registered included.`);
    this.name = 'TooManyClientToolsError';
  }
}
