import type { Dirent } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolAbortedError } from '../errors';
import { WALK_MAX_ENTRIES, WALK_SKIPPED_DIRECTORIES } from './limits';
import { WorkspaceHandle } from './workspace-handle';
import { isInside, type Workspace } from './workspace-path';

/** One file or directory met by a walk. */
export interface WalkEntry {
  /** Real absolute path (a symlink's target). Never shown to the guest. */
  readonly absolute: string;
  /** Path relative to the walk's start directory, `/`-separated. */
  readonly relative: string;
  readonly isDirectory: boolean;
}

export interface WalkOptions {
  readonly signal?: AbortSignal;
  /** Entries visited at most; the walk stops early and reports `exhausted`. */
  readonly maxEntries?: number;
  readonly toolName: string;
}

export interface WalkSummary {
  /** True when the walk stopped at `maxEntries` before seeing the whole tree. */
  readonly exhausted: boolean;
}

/**
 * A directory's entries, read through a descriptor checked to be inside the workspace, and its real
 * path; undefined when it cannot be listed (unreadable or gone, as ripgrep and fd skip them) or is
 * no longer a real directory inside the workspace (swapped for a symlink since it was seen).
 */
async function listDirectory(
  workspace: Workspace,
  dir: string,
  relative: string,
): Promise<{ real: string; children: Dirent[] } | undefined> {
  let handle: WorkspaceHandle;
  try {
    handle = await WorkspaceHandle.open(workspace, dir, relative, { directory: true });
  } catch {
    return undefined;
  }
  try {
    return { real: handle.realPath, children: await handle.readEntries() };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Depth-first walk of a directory inside the workspace, children in name order so results are
 * stable. Symlinks are followed only to files and directories that stay inside the workspace, and
 * symlinked directories are never descended (no cycles, no second copy of a subtree). Entries are
 * only named here: whoever reads one opens it through WorkspaceHandle. The visitor returns `false`
 * to stop.
 */
export async function walkWorkspace(
  workspace: Workspace,
  start: string,
  visit: (entry: WalkEntry) => boolean | Promise<boolean>,
  options: WalkOptions,
): Promise<WalkSummary> {
  const maxEntries = options.maxEntries ?? WALK_MAX_ENTRIES;
  let visited = 0;
  const stack: Array<{ dir: string; prefix: string }> = [{ dir: start, prefix: '' }];
  while (stack.length > 0) {
    const { dir, prefix } = stack.pop() as { dir: string; prefix: string };
    const listed = await listDirectory(workspace, dir, prefix);
    if (!listed) {
      continue;
    }
    const { real, children } = listed;
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirectories: Array<{ dir: string; prefix: string }> = [];
    for (const child of children) {
      if (options.signal?.aborted) {
        throw new ToolAbortedError(options.toolName);
      }
      if (visited >= maxEntries) {
        return { exhausted: true };
      }
      visited += 1;
      const entry = await describeChild(workspace, real, prefix, child);
      if (!entry) {
        continue;
      }
      if (!(await visit(entry))) {
        return { exhausted: false };
      }
      if (entry.isDirectory && child.isDirectory() && !WALK_SKIPPED_DIRECTORIES.has(child.name)) {
        subdirectories.push({ dir: entry.absolute, prefix: `${entry.relative}/` });
      }
    }
    // Reverse so the first child directory is walked first (depth-first, name order).
    stack.push(...subdirectories.reverse());
  }
  return { exhausted: false };
}

async function describeChild(workspace: Workspace, dir: string, prefix: string, child: Dirent): Promise<WalkEntry | undefined> {
  const absolute = path.join(dir, child.name);
  const relative = `${prefix}${child.name}`;
  if (child.isDirectory()) {
    return { absolute, relative, isDirectory: true };
  }
  if (child.isFile()) {
    return { absolute, relative, isDirectory: false };
  }
  if (!child.isSymbolicLink()) {
    return undefined; // sockets, fifos, devices: nothing to read
  }
  try {
    const target = await realpath(absolute);
    if (!isInside(workspace.root, target)) {
      return undefined;
    }
    const info = await stat(target);
    return info.isFile() || info.isDirectory() ? { absolute: target, relative, isDirectory: info.isDirectory() } : undefined;
  } catch {
    return undefined; // dangling link
  }
}
