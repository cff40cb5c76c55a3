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
  WALK_MAX_ENTRIES,
} from './limits';
import { createLineMatcher, type LineMatcher } from './line-matcher';
import { MatchBudget } from './match-budget';
import { walkWorkspace } from './walk';
import { WorkspaceHandle } from './workspace-handle';
import { resolveWorkspacePath, workspaceRelative, type Workspace } from './workspace-path';

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
  readonly workspace: Workspace;
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

function cutLine(state: SearchState, text: string): string {
  const clean = text.replace(/\r$/u, '');
  if (clean.length <= GREP_MAX_LINE_CHARS) {
    return clean;
  }
  state.linesCut = true;
  return `${clean.slice(0, GREP_MAX_LINE_CHARS)}...`;
}

/** Searches a walked file, opened through a descriptor checked to be inside the workspace; one
 * that cannot be opened (gone, unreadable, or now leading outside) is skipped. Returns false once
 * the search must stop (limit or output budget). */
async function searchPath(state: SearchState, absolute: string, shownPath: string): Promise<boolean> {
  let file: WorkspaceHandle;
  try {
    file = await WorkspaceHandle.open(state.workspace, absolute, shownPath);
  } catch {
    return true;
  }
  return searchFile(state, file, shownPath);
}

/** Searches an opened file and closes it; returns false once the search must stop. */
async function searchFile(state: SearchState, file: WorkspaceHandle, shownPath: string): Promise<boolean> {
  let text: string;
  try {
    if (!file.stats.isFile()) {
      return true;
    }
    if (file.stats.size > GREP_MAX_FILE_BYTES) {
      state.skippedLarge += 1;
      return true;
    }
    const buffer = await file.readBytes().catch(() => undefined);
    if (!buffer || looksBinary(buffer)) {
      return true; // binary files are skipped, as ripgrep does
    }
    text = buffer.toString('utf8');
  } finally {
    await file.close();
  }
  // Split as the line matcher does: the final newline ends the last line rather than starting one.
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  // One index past the limit tells that the limit cut the results.
  for (const index of await state.matcher.matchingLines(text, state.limit - state.matches.length + 1)) {
    if (state.matches.length >= state.limit) {
      state.limitReached = true;
      return false;
    }
    const match: GrepMatch = {
      path: shownPath,
      line: index + 1,
      text: cutLine(state, lines[index]),
      ...(state.context > 0
        ? {
            before: lines.slice(Math.max(0, index - state.context), index).map((line) => cutLine(state, line)),
            after: lines.slice(index + 1, index + 1 + state.context).map((line) => cutLine(state, line)),
          }
        : {}),
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
  const target = await resolveWorkspacePath(workspace, input.path ?? '.');
  const matcher = await createLineMatcher(input.pattern, { ignoreCase: input.ignoreCase, literal: input.literal }, budget);
  const state: SearchState = {
    workspace,
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
  let exhausted = false;
  try {
    const opened = await WorkspaceHandle.open(workspace, target.absolute, input.path ?? '.');
    if (opened.stats.isDirectory()) {
      await opened.close();
      const summary = await walkWorkspace(
        workspace,
        opened.realPath,
        (entry) =>
          entry.isDirectory || (glob && !glob.matches(entry.relative))
            ? true
            : searchPath(state, entry.absolute, workspaceRelative(target.relative, entry.relative)),
        { signal, toolName: 'grep' },
      );
      exhausted = summary.exhausted;
    } else {
      await searchFile(state, opened, target.relative);
    }
  } finally {
    await matcher.close();
  }
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
  const truncated = state.limitReached || state.bytesReached || exhausted || state.skippedLarge > 0;
  return notices.length === 0
    ? { matches: state.matches, truncated }
    : { matches: state.matches, truncated, notice: `[${notices.join('. ')}]` };
}
