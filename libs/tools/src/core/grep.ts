import { readFile, stat } from 'node:fs/promises';
import { compileGlob, type GlobMatcher } from './glob';
import type { GrepInput } from './inputs';
import {
  ByteBudget,
  clampLimit,
  formatSize,
  GREP_DEFAULT_LIMIT,
  GREP_MATCH_BUDGET_MS,
  GREP_MAX_CONTEXT,
  GREP_MAX_FILE_BYTES,
  GREP_MAX_LIMIT,
  GREP_MAX_LINE_CHARS,
  looksBinary,
  MAX_OUTPUT_BYTES,
  WALK_MAX_ENTRIES,
} from './limits';
import { createLineMatcher, type LineMatcher } from './line-matcher';
import { walkWorkspace } from './walk';
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

/** Searches one file; returns false once the search must stop (limit or output budget). */
async function searchFile(state: SearchState, absolute: string, shownPath: string): Promise<boolean> {
  const info = await stat(absolute).catch(() => undefined);
  if (!info?.isFile()) {
    return true;
  }
  if (info.size > GREP_MAX_FILE_BYTES) {
    state.skippedLarge += 1;
    return true;
  }
  const buffer = await readFile(absolute).catch(() => undefined);
  if (!buffer || looksBinary(buffer)) {
    return true; // binary files are skipped, as ripgrep does
  }
  const lines = buffer.toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop(); // the final newline ends the last line rather than starting an empty one
  }
  for (const index of state.matcher.matchingLines(lines)) {
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
 * Searches file contents under `path` (a directory or one file) for a JavaScript regular
 * expression, or literal text with `literal: true`. Binary files, `.git` and `node_modules` are
 * skipped; results are bounded by `limit` matches and 50 KB.
 */
export async function grepTool(workspace: Workspace, input: GrepInput, signal?: AbortSignal): Promise<GrepResult> {
  const matcher = createLineMatcher(input.pattern, { ignoreCase: input.ignoreCase, literal: input.literal, budgetMs: GREP_MATCH_BUDGET_MS });
  const target = await resolveWorkspacePath(workspace, input.path ?? '.');
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
  let exhausted = false;
  if ((await stat(target.absolute)).isDirectory()) {
    const glob: GlobMatcher | undefined = input.glob ? compileGlob(input.glob) : undefined;
    const summary = await walkWorkspace(
      workspace,
      target.absolute,
      (entry) =>
        entry.isDirectory || (glob && !glob.matches(entry.relative))
          ? true
          : searchFile(state, entry.absolute, workspaceRelative(target.relative, entry.relative)),
      { signal, toolName: 'grep' },
    );
    exhausted = summary.exhausted;
  } else {
    await searchFile(state, target.absolute, target.relative);
  }
  const notices: string[] = [];
  if (state.limitReached) {
    notices.push(`${state.limit} matches limit reached. Use limit=${Math.min(state.limit * 2, GREP_MAX_LIMIT)} for more, or refine pattern`);
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
  return notices.length === 0 ? { matches: state.matches, truncated } : { matches: state.matches, truncated, notice: `[${notices.join('. ')}]` };
}
