import type { Dirent } from 'node:fs';
import { ToolAbortedError } from '../errors';
import { SHARED_SLICES, sortInSlices } from './event-loop-slices';
import { WALK_MAX_DEPTH, WALK_MAX_ENTRIES, WALK_SKIPPED_DIRECTORIES } from './limits';
import { openChild, openSubdirectory, type WorkspaceEntry } from './workspace-entry';
import type { Workspace } from './workspace-path';

/** One file or directory met by a walk. */
export interface WalkEntry {
  /** Path relative to the walk's start directory, `/`-separated. */
  readonly relative: string;
  readonly isDirectory: boolean;
  /** Opens it (a symlink's target, looked up beneath the root) while the visitor runs. */
  open(): Promise<WorkspaceEntry>;
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
  /** True when directories deeper than WALK_MAX_DEPTH were left out. */
  readonly tooDeep: boolean;
}

const byName = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

class Walk {
  private visited = 0;
  private readonly slices = SHARED_SLICES;
  exhausted = false;
  tooDeep = false;

  constructor(
    private readonly workspace: Workspace,
    private readonly visit: (entry: WalkEntry) => boolean | Promise<boolean>,
    private readonly options: WalkOptions,
  ) {}

  /** Walks one open directory; false once the walk must stop. */
  async directory(directory: WorkspaceEntry, prefix: string, depth: number): Promise<boolean> {
    const children = await directory.readEntries(this.slices).catch(() => undefined);
    if (!children) {
      return true; // unreadable or gone, as ripgrep and fd skip them
    }
    await sortInSlices(children, byName, this.slices);
    const subdirectories: string[] = [];
    for (const child of children) {
      if (this.options.signal?.aborted) {
        throw new ToolAbortedError(this.options.toolName);
      }
      if (this.visited >= (this.options.maxEntries ?? WALK_MAX_ENTRIES)) {
        this.exhausted = true;
        return false;
      }
      this.visited += 1;
      const entry = await this.describe(directory, prefix, child);
      if (entry && !(await this.visit(entry))) {
        return false;
      }
      if (entry && child.isDirectory() && !WALK_SKIPPED_DIRECTORIES.has(child.name)) {
        subdirectories.push(child.name);
      }
      await this.slices.pause();
    }
    for (const name of subdirectories) {
      if (depth >= WALK_MAX_DEPTH) {
        this.tooDeep = true;
        break;
      }
      const subdirectory = await openSubdirectory(this.workspace, directory, name);
      if (!subdirectory) {
        continue; // gone, or swapped for a symlink since it was listed: not descended
      }
      try {
        if (!(await this.directory(subdirectory, `${prefix}${name}/`, depth + 1))) {
          return false;
        }
      } finally {
        await subdirectory.close();
      }
    }
    return true;
  }

  /** What a child is, a symlink's target looked up beneath the root; undefined for what is not
   * walked: FIFOs, sockets, devices, dangling links and links leading out. */
  private async describe(directory: WorkspaceEntry, prefix: string, child: Dirent): Promise<WalkEntry | undefined> {
    const relative = `${prefix}${child.name}`;
    const open = (): Promise<WorkspaceEntry> => openChild(this.workspace, directory, child.name, relative);
    if (child.isDirectory() || child.isFile()) {
      return { relative, isDirectory: child.isDirectory(), open };
    }
    if (!child.isSymbolicLink()) {
      return undefined;
    }
    try {
      const target = await open();
      await target.close();
      return target.kind === 'other' ? undefined : { relative, isDirectory: target.kind === 'directory', open };
    } catch {
      return undefined;
    }
  }
}

/**
 * Depth-first walk of an open directory of the workspace, children in name order so results are
 * stable: a directory's entries, then its subdirectories. Each subdirectory is opened from its
 * parent's descriptor, never through a symlink, so a walk never leaves the workspace and never
 * descends a symlinked directory (no cycles, no second copy of a subtree); symlinks are shown only
 * when their target is inside. Entries are only named here: whoever reads one calls its `open`
 * while visiting it. The visitor returns `false` to stop. The walk yields to the event loop between
 * slices, so a large tree never holds it.
 */
export async function walkWorkspace(
  workspace: Workspace,
  start: WorkspaceEntry,
  visit: (entry: WalkEntry) => boolean | Promise<boolean>,
  options: WalkOptions,
): Promise<WalkSummary> {
  const walk = new Walk(workspace, visit, options);
  await walk.directory(start, '', 0);
  return { exhausted: walk.exhausted, tooDeep: walk.tooDeep };
}
