import { compileGlob } from './glob';
import type { GrepInput } from './inputs';
import {
  ByteBudget,
  clampLimit,
  formatSize,
  GREP_DEFAULT_LIMIT,
  GREP_MAX_CONTEXT,
  GREP_MAX_FILE_BYTES,
  GREP_MAX_LIMIT,
  GREP_MAX_LINE_CHARS,
  looksBinary,
  MAX_OUTPUT_BYTES,
  WALK_MAX_DEPTH,
  WALK_MAX_ENTRIES,
} from './limits';
import { createLineMatcher, type LineMatcher } from './line-matcher';
import { MatchBudget } from './match-budget';
import { walkWorkspace, type WalkEntry, type WalkSummary } from './walk';
import { openGuestPath, type WorkspaceEntry } from './workspace-entry';
import { workspaceRelative, type Workspace } from './workspace-path';

/** One matching line. `before`/`after` hold up to `context` neighbouring lines. */
export interface GrepMatch {
  /** Workspace-relative path of the file (ready for `read`). */
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  readonly text: string;
  readonly before?: string[];
  readonly after?: string[];
}

export interface GrepResult {
  readonly matches: GrepMatch[];
  readonly truncated: boolean;
  readonly notice?: string;
}

interface SearchState {
  readonly matcher: LineMatcher;
  readonly limit: number;
  readonly context: number;
  readonly budget: ByteBudget;
  readonly matches: GrepMatch[];
  limitReached: boolean;
  bytesReached: boolean;
  linesCut: boolean;
  skippedLarge: number;
}

/** Searches a walked file, opened beneath the workspace root; one that cannot be opened (gone,
 * unreadable, or a link now leading outside) is skipped. Returns false once the search must stop
 * (limit or output budget). */
async function searchPath(state: SearchState, entry: WalkEntry, shownPath: string): Promise<boolean> {
  let file: WorkspaceEntry;
  try {
    file = await entry.open();
  } catch {
    return true;
  }
  return searchFile(state, file, shownPath);
}

/** A text file's bytes, in a buffer of their own (handed to the matching thread); undefined for
 * what grep skips: not a regular file, too large, binary, or unreadable. */
async function textBytes(state: SearchState, file: WorkspaceEntry): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (file.kind !== 'file' || file.stats.size === 0) {
    return undefined; // an empty file has no line to match: no round trip to the matching thread
  }
  if (file.stats.size > GREP_MAX_FILE_BYTES) {
    state.skippedLarge += 1;
    return undefined;
  }
  const bytes = new Uint8Array(file.stats.size);
  let filled = 0;
  try {
    while (filled < bytes.length) {
      const read = await file.read(bytes, filled, bytes.length - filled, filled);
      if (read === 0) {
        break;
      }
      filled += read;
    }
  } catch {
    return undefined;
  }
  const text = filled === bytes.length ? bytes : bytes.slice(0, filled);
  // Binary files are skipped, as ripgrep does.
  return looksBinary(Buffer.from(text.buffer, 0, text.length)) ? undefined : text;
}

/** Searches an opened file and closes it; returns false once the search must stop. */
async function searchFile(state: SearchState, file: WorkspaceEntry, shownPath: string): Promise<boolean> {
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  try {
    bytes = await textBytes(state, file);
  } finally {
    await file.close();
  }
  if (!bytes) {
    return true;
  }
  // One match past the limit tells that the limit cut the results.
  const found = await state.matcher.search(bytes, {
    maxMatches: state.limit - state.matches.length + 1,
    context: state.context,
    maxBytes: state.budget.remaining,
  });
  for (const line of found) {
    if (state.matches.length >= state.limit) {
      state.limitReached = true;
      return false;
    }
    state.linesCut ||= line.cut;
    const match: GrepMatch = {
      path: shownPath,
      line: line.index + 1,
      text: line.text,
      ...(state.context > 0 ? { before: line.before, after: line.after } : {}),
    };
    const rendered = [...(match.before ?? []), `${match.path}:${match.line}: ${match.text}`, ...(match.after ?? [])].join('\n');
    if (!state.budget.take(rendered)) {
      state.bytesReached = true;
      return false;
    }
    state.matches.push(match);
  }
  return true;
}

/**
 * Searches file contents under `path` (a directory or one file) for an RE2 regular expression, or
 * literal text with `literal: true`. Binary files, `.git` and `node_modules` are skipped; results
 * are bounded by `limit` matches and 50 KB, matching by the call's budget.
 */
export async function grepTool(workspace: Workspace, input: GrepInput, signal?: AbortSignal): Promise<GrepResult> {
  const budget = new MatchBudget();
  const glob = input.glob === undefined ? undefined : compileGlob(input.glob, budget);
  const matcher = await createLineMatcher(input.pattern, { ignoreCase: input.ignoreCase, literal: input.literal }, budget);
  const state: SearchState = {
    matcher,
    limit: clampLimit(input.limit, GREP_DEFAULT_LIMIT, GREP_MAX_LIMIT),
    context: Math.min(input.context ?? 0, GREP_MAX_CONTEXT),
    budget: new ByteBudget(MAX_OUTPUT_BYTES),
    matches: [],
    limitReached: false,
    bytesReached: false,
    linesCut: false,
    skippedLarge: 0,
  };
  let summary: WalkSummary = { exhausted: false, tooDeep: false };
  try {
    const opened = await openGuestPath(workspace, input.path ?? '.');
    if (opened.kind === 'directory') {
      try {
        summary = await walkWorkspace(
          workspace,
          opened,
          (entry) =>
            entry.isDirectory || (glob && !glob.matches(entry.relative))
              ? true
              : searchPath(state, entry, workspaceRelative(opened.relative, entry.relative)),
          { signal, toolName: 'grep' },
        );
      } finally {
        await opened.close();
      }
    } else {
      await searchFile(state, opened, opened.relative);
    }
  } finally {
    await matcher.close();
  }
  const { exhausted, tooDeep } = summary;
  const notices: string[] = [];
  if (state.limitReached) {
    notices.push(
      `${state.limit} matches limit reached. Use limit=${Math.min(state.limit * 2, GREP_MAX_LIMIT)} for more, or refine pattern`,
    );
  }
  if (state.bytesReached) {
    notices.push(`${formatSize(MAX_OUTPUT_BYTES)} limit reached`);
  }
  if (state.linesCut) {
    notices.push(`Some lines truncated to ${GREP_MAX_LINE_CHARS} chars. Use read tool to see full lines`);
  }
  if (state.skippedLarge > 0) {
    notices.push(`Skipped ${state.skippedLarge} file(s) over ${formatSize(GREP_MAX_FILE_BYTES)}`);
  }
  if (exhausted) {
    notices.push(`Stopped after scanning ${WALK_MAX_ENTRIES} entries; pass a narrower path or glob`);
  }
  if (tooDeep) {
    notices.push(`Directories more than ${WALK_MAX_DEPTH} levels deep were not searched; pass a deeper path`);
  }
  const truncated = state.limitReached || state.bytesReached || exhausted || tooDeep || state.skippedLarge > 0;
  return notices.length === 0
    ? { matches: state.matches, truncated }
    : { matches: state.matches, truncated, notice: `[${notices.join('. ')}]` };
}
