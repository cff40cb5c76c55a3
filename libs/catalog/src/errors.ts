/** Typed errors of the tool catalog. Each carries a readonly `code` clients and hosts can match on. */

/** Thrown when a guest calls an MCP namespace tool with more than one argument or a non-object. */
export class McpArgumentShapeError extends Error {
  readonly code = 'invalid_mcp_arguments';
  constructor() {
    super('MCP namespace tools accept one object argument.');
    this.name = 'Error';
  }
}

/**
 * Thrown when required MCP fields are absent after schema defaults were applied. The message names
 * the first missing field only (SPEC §5), even when several are missing; `missing` lists them all.
 */
export class McpMissingArgumentError extends Error {
  readonly code = 'invalid_mcp_arguments';
  constructor(readonly missing: readonly string[]) {
    super(`Missing required MCP namespace argument: ${missing[0]}`);
    this.name = 'Error';
  }
}

/** Thrown when an `API.list`/`API.read` path has a `..` segment. */
export class ApiPathTraversalError extends Error {
  readonly code = 'invalid_api_path';
  constructor(readonly path: string) {
    super(`API paths must not contain ".." segments: ${path}`);
    this.name = 'Error';
  }
}

/** Thrown when `API.read` names a file that is not generated for this catalog. */
export class ApiFileNotFoundError extends Error {
  readonly code = 'api_file_not_found';
  constructor(readonly path: string) {
    super(`Unknown API file: ${path}. Use API.list() to see the available files.`);
    this.name = 'Error';
  }
}

/** Thrown when an `API.list`/`API.read` argument is not a string. */
export class ApiPathTypeError extends Error {
  readonly code = 'invalid_api_path';
  constructor() {
    super('API path must be a string.');
    this.name = 'Error';
  }
}

/** Thrown when no suffix of the sha256 digest gives a free callable name (practically never). */
export class CallableNameAllocationError extends Error {
  readonly code = 'callable_name_unavailable';
  constructor(readonly base: string) {
    super(`could not allocate a unique code mode callable name for ${base}`);
    this.name = 'CallableNameAllocationError';
  }
}

/** Thrown when two catalog entries share a host id: routing by host id would be ambiguous. */
export class DuplicateHostIdError extends Error {
  readonly code = 'duplicate_host_id';
  constructor(readonly hostId: string) {
    super(`duplicate tool catalog host id: ${hostId}`);
    this.name = 'DuplicateHostIdError';
  }
}
