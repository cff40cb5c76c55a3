import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkspacePathKindError } from '../errors';
import type { LsInput } from './inputs';
import { ByteBudget, clampLimit, formatSize, LS_DEFAULT_LIMIT, LS_MAX_LIMIT, MAX_OUTPUT_BYTES } from './limits';
import { WorkspaceHandle } from './workspace-handle';
import { isInside, resolveWorkspacePath, type Workspace, type WorkspacePath } from './workspace-path';

/** What `ls` returns: entry names sorted case-insensitively, directories with a `/` suffix. */
export interface LsResult {
  readonly path: string;
  readonly entries: string[];
  readonly truncated: boolean;
  readonly notice?: string;
}

/** `/` for a directory, `` for anything else; a symlink leaving the workspace is never followed. */
async function suffixOf(workspace: Workspace, absolute: string): Promise<string> {
  try {
    const target = await realpath(absolute);
    if (!isInside(workspace.root, target)) {
      return '';
    }
    return (await stat(target)).isDirectory() ? '/' : '';
  } catch {
    return ''; // dangling symlink: listed by name only
  }
}

/** Names in a directory, read through a descriptor checked to be inside the workspace, and the
 * directory's real path. */
async function listDirectory(
  workspace: Workspace,
  target: WorkspacePath,
  shownPath: string,
): Promise<{ directory: string; names: string[] }> {
  const handle = await WorkspaceHandle.open(workspace, target.absolute, shownPath);
  try {
    if (!handle.stats.isDirectory()) {
      throw new WorkspacePathKindError(target.relative, 'directory');
    }
    return { directory: handle.realPath, names: (await handle.readEntries()).map((entry) => entry.name) };
  } finally {
    await handle.close();
  }
}

/** Lists one workspace directory, dotfiles included, up to `limit` entries and 50 KB. */
export async function lsTool(workspace: Workspace, input: LsInput): Promise<LsResult> {
  const target = await resolveWorkspacePath(workspace, input.path ?? '.');
  const { directory, names } = await listDirectory(workspace, target, input.path ?? '.');
  const limit = clampLimit(input.limit, LS_DEFAULT_LIMIT, LS_MAX_LIMIT);
  names.sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  const entries: string[] = [];
  const budget = new ByteBudget(MAX_OUTPUT_BYTES);
  const notices: string[] = [];
  for (const name of names) {
    if (entries.length >= limit) {
      notices.push(`${limit} entries limit reached. Use limit=${Math.min(limit * 2, LS_MAX_LIMIT)} for more`);
      break;
    }
    const entry = name + (await suffixOf(workspace, path.join(directory, name)));
    if (!budget.take(entry)) {
      notices.push(`${formatSize(MAX_OUTPUT_BYTES)} limit reached`);
      break;
    }
    entries.push(entry);
  }
  if (notices.length === 0) {
    return { path: target.relative, entries, truncated: false };
  }
  return { path: target.relative, entries, truncated: true, notice: `[${notices.join('. ')}]` };
}
