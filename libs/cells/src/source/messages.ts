/**
 * The exact strings of SPEC §3 "Input rules". Clients match on them, so each is defined once
 * here and imported wherever it is produced or asserted.
 */

/** Code over this many UTF-8 bytes is refused before it is parsed (SPEC §2, §3). */
export const MAX_CODE_BYTES = 1024 * 1024;
/** A title longer than this many characters (Unicode code points) is refused. */
export const MAX_TITLE_CHARS = 120;

export const BODY_NOT_OBJECT_ERROR = 'request body must be a JSON object.';
export const TITLE_REQUIRED_ERROR = 'title must be a non-empty string.';
export const TITLE_TOO_LONG_ERROR = `title must be at most ${MAX_TITLE_CHARS} characters.`;
export const CODE_COMMAND_MISMATCH_ERROR = 'code and command must match when both are provided.';
export const CODE_REQUIRED_ERROR = 'code or command must be a non-empty string.';
export const JAVASCRIPT_ONLY_ERROR = 'Code Mode accepts JavaScript only. Remove language and typecheck; use API.read(...) for tool types.';
export const RESTART_SAFE_ERROR = 'restartSafe must be a boolean.';
export const AWAIT_RESULTS_ERROR = 'awaitResults must be a boolean.';
export const CODE_TOO_LARGE_ERROR = 'code exceeds 1 MiB.';
export const MODULE_ACCESS_ERROR = 'code mode module access is disabled.';
/** Spelled exactly as OpenClaw spells it, "TypeScript" included (SPEC §3). */
export const SHELL_SOURCE_ERROR =
  'code-mode exec runs JavaScript or TypeScript, not shell commands. Call an enabled async tool global from guest JavaScript; use catalog.search(query) when the bounded quick index omits it. Do not retry the same shell command as code.';
/** SPEC §19: a cell that is TypeScript rather than broken JavaScript is told what to remove. */
export function typeScriptSourceError(what: string, line: number): string {
  return `code mode accepts plain JavaScript only; remove TypeScript syntax (${what} at line ${line}).`;
}
export const RUN_ID_ERROR = 'runId must be a non-empty string.';
