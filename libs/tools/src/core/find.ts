import { WorkspacePathKindError } from '../errors';
import { compileGlob, type GlobMatcher } from './glob';
import type { FindInput } from './inputs';
import {
  ByteBudget,
  clampLimit,
  FIND_DEFAULT_LIMIT,
  FIND_MAX_LIMIT,
  formatSize,
  MAX_OUTPUT_BYTES,
  WALK_MAX_DEPTH,
  WALK_MAX_ENTRIES,
} from './limits';
import { MatchBudget } from './match-budget';
import { walkWorkspace } from './walk';
import { openGuestPath, type WorkspaceEntry } from './workspace-entry';
import { workspaceRelative, type Workspace } from './workspace-path';

/** What `find` returns: matching paths relative to the workspace root (ready for `read`),
 * directories with a `/` suffix, in depth-first name order. */
export interface FindResult {
  readonly path: string;
  readonly files: string[];
  readonly truncated: boolean;
  readonly notice?: string;
}

/** Finds files and directories under `path` whose name (or relative path) matches the glob. */
export async function findTool(workspace: Workspace, input: FindInput, signal?: AbortSignal): Promise<FindResult> {
  const glob = compileGlob(input.pattern, new MatchBudget());
  const start = await openGuestPath(workspace, input.path ?? '.');
  try {
    if (start.kind !== 'directory') {
      throw new WorkspacePathKindError(start.relative, 'directory');
    }
    return await findBelow(workspace, start, glob, input, signal);
  } finally {
    await start.close();
  }
}

/** Walks the open directory `start` for the glob's matches. */
async function findBelow(
  workspace: Workspace,
  start: WorkspaceEntry,
  glob: GlobMatcher,
  input: FindInput,
  signal?: AbortSignal,
): Promise<FindResult> {
  const limit = clampLimit(input.limit, FIND_DEFAULT_LIMIT, FIND_MAX_LIMIT);
  const files: string[] = [];
  const budget = new ByteBudget(MAX_OUTPUT_BYTES);
  const notices: string[] = [];
  const summary = await walkWorkspace(
    workspace,
    start,
    (entry) => {
      if (!glob.matches(entry.relative)) {
        return true;
      }
      if (files.length >= limit) {
        notices.push(`${limit} results limit reached. Use limit=${Math.min(limit * 2, FIND_MAX_LIMIT)} for more, or refine pattern`);
        return false;
      }
      const shown = workspaceRelative(start.relative, entry.relative) + (entry.isDirectory ? '/' : '');
      if (!budget.take(shown)) {
        notices.push(`${formatSize(MAX_OUTPUT_BYTES)} limit reached`);
        return false;
      }
      files.push(shown);
      return true;
    },
    { signal, toolName: 'find' },
  );
  if (summary.exhausted) {
    notices.push(`Stopped after scanning ${WALK_MAX_ENTRIES} entries; pass a narrower path`);
  }
  if (summary.tooDeep) {
    notices.push(`Directories more than ${WALK_MAX_DEPTH} levels deep were not searched; pass a deeper path`);
  }
  if (notices.length === 0) {
    return { path: start.relative, files, truncated: false };
  }
  return { path: start.relative, files, truncated: true, notice: `[${notices.join('. ')}]` };
}
