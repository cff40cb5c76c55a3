/**
 * Bounds of the core workspace tools. They follow OpenClaw's coding tools (2000 lines or 50 KB of
 * output, grep lines cut at 500 characters, default limits of 500 / 1000 / 100) so one call can
 * never flood the model's context, and add caps OpenClaw gets from ripgrep and fd for free: how
 * much of the tree one call may walk, how large a file may be loaded, how long patterns may match.
 */

/** Output budget of one call, in UTF-8 bytes of the returned text. */
export const MAX_OUTPUT_BYTES = 50 * 1024;
/** Lines `read` returns at most per call; continue with `offset`. */
export const READ_MAX_LINES = 2000;
/** Largest file `read` loads; bigger files are refused with a hint to grep. */
export const READ_MAX_FILE_BYTES = 64 * 1024 * 1024;

export const LS_DEFAULT_LIMIT = 500;
export const LS_MAX_LIMIT = 10_000;
export const FIND_DEFAULT_LIMIT = 1000;
export const FIND_MAX_LIMIT = 10_000;
export const GREP_DEFAULT_LIMIT = 100;
export const GREP_MAX_LIMIT = 1000;
export const GREP_MAX_CONTEXT = 20;
/** Matched and context lines are cut to this many characters; read shows full lines. */
export const GREP_MAX_LINE_CHARS = 500;
/** Files larger than this are skipped by grep (counted in its notice). */
export const GREP_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Time one find or grep call may spend matching its patterns (regex and globs together): past it
 * the call fails with `pattern too expensive`, so no pattern can hold the worker (SPEC §10). */
export const PATTERN_MATCH_BUDGET_MS = 1000;
/** Longest glob find and grep accept. Globs are matched on the main thread, one path at a time:
 * at this size one match against a path of PATH_MAX characters stays within tens of milliseconds. */
export const GLOB_MAX_CHARS = 512;

/** Directory entries one find/grep call visits at most; deeper trees need a narrower path. */
export const WALK_MAX_ENTRIES = 50_000;
/** Directory levels below its start a find/grep walk descends at most: a walk holds one open
 * descriptor per level, so this bounds the descriptors one call holds. */
export const WALK_MAX_DEPTH = 64;
/** Directories find and grep never descend into (OpenClaw ignores the same two). */
export const WALK_SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** Leading bytes inspected for a NUL byte to tell binary files from text. */
export const BINARY_SNIFF_BYTES = 8192;

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Human size as OpenClaw prints it in notices: `512B`, `50.0KB`, `1.5MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes}B`;
  }
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(1)}KB`;
  }
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/** Clamps an optional positive limit into `[1, max]`, defaulting when absent. */
export function clampLimit(value: number | undefined, fallback: number, max: number): number {
  return Math.min(max, Math.max(1, value ?? fallback));
}

/** True when the buffer looks binary (a NUL byte among its first bytes), as ripgrep decides. */
export function looksBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** Counts bytes of lines joined by newlines against a budget: whole lines only. */
export class ByteBudget {
  private used = 0;
  constructor(private readonly limit: number = MAX_OUTPUT_BYTES) {}

  /** Bytes still free. */
  get remaining(): number {
    return this.limit - this.used;
  }

  /** Takes the line if it fits (plus its separator) and says whether it did. */
  take(line: string): boolean {
    const cost = utf8Bytes(line) + (this.used === 0 ? 0 : 1);
    if (this.used + cost > this.limit) {
      return false;
    }
    this.used += cost;
    return true;
  }
}
