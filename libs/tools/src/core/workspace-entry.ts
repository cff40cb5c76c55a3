import { constants, existsSync, type Dirent, type Stats } from 'node:fs';
import { lstat, open, opendir, readdir, readlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { WorkspacePathEscapeError, WorkspacePathNotFoundError } from '../errors';
import type { EventLoopSlices } from './event-loop-slices';
import { displayPath, guestPathNames, linkTargetNames, type Workspace } from './workspace-path';

/**
 * Opens workspace paths beneath the root's descriptor, one name at a time, without ever following
 * a link out (SPEC §10 "Paths tell nothing"). Node has no `openat2(RESOLVE_BENEATH)`, so each name
 * is looked up relative to the directory opened before it, through `/proc/self/fd/<fd>/<name>`:
 * the kernel resolves `/proc/self/fd/<fd>` to that very directory, wherever it is now, and the
 * last name is only ever `lstat`-ed, `readlink`-ed, or opened with `O_NOFOLLOW | O_NONBLOCK`. A
 * symlink is never followed by the kernel: its text is read and walked here, name by name from
 * the root again (workspace-path.ts), so a link whose target leaves the workspace is refused from
 * its text alone, without a look at what it points to: the answer is the same whether that target
 * exists or not. FIFOs, sockets and devices are never opened. A name swapped for a symlink between
 * the `lstat` and the open fails the open (`O_NOFOLLOW`) and is looked at again; one swapped for a
 * FIFO is opened without blocking and given up. Nothing outside the workspace is opened, stat-ed
 * or resolved, not even briefly.
 */

/** Where the kernel shows a process's open descriptors. */
const PROC_FD_DIR = '/proc/self/fd';
/** Symlinks (and names found swapped mid-lookup) one lookup follows at most, as Linux's MAXSYMLINKS. */
const MAX_LINK_HOPS = 40;

/** Directory entries read per batch. */
const DIRECTORY_BATCH = 512;

/**
 * A directory whose size (`st_size`) is at most this is read in one go. File systems size a
 * directory by what its entries take (ext4 and xfs in blocks of them, tmpfs 20 bytes an entry):
 * 4 KiB is one ext4 block (~100–200 names) or ~200 tmpfs entries, far fewer names than a batch
 * takes to build. A size of 0 (a file system that does not say) is read in batches.
 */
const SMALL_DIRECTORY_BYTES = 4096;

/** Without /proc (macOS development) names are looked up by their real path: the same rules, but a
 * directory swapped for a symlink between two steps is not caught. Deployments run on Linux. */
const hasProcFd = existsSync(PROC_FD_DIR);

/** What an entry is; `other` (FIFO, socket, device) is described, never opened. */
export type EntryKind = 'file' | 'directory' | 'other';

/** Thrown when a lookup meets more than MAX_LINK_HOPS links; reported as the errno it stands for. */
export class LinkLoopError extends Error {
  readonly code = 'ELOOP';
  constructor() {
    super('too many levels of symbolic links');
  }
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function isMissing(error: unknown): boolean {
  const code = errnoOf(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** An entry of the workspace: its real place (names below the root) and, for files and
 * directories, an open descriptor; everything is read through it. */
export class WorkspaceEntry {
  constructor(
    private readonly workspace: Workspace,
    /** Names below the root of the real file (no symlinks among them). */
    readonly names: readonly string[],
    readonly kind: EntryKind,
    /** `fstat` of the descriptor (`lstat` for `other`). */
    readonly stats: Stats,
    private readonly handle: FileHandle | undefined,
    /** False for the workspace root, whose descriptor lives as long as the workspace. */
    private readonly owned: boolean,
  ) {}

  /** The workspace root, as an entry. */
  static root(workspace: Workspace): WorkspaceEntry {
    return new WorkspaceEntry(workspace, [], 'directory', workspace.rootStats, workspace.rootDir, false);
  }

  /** Workspace-relative path of the real file, `.` for the root. */
  get relative(): string {
    return displayPath(this.names);
  }

  /** Path through which a name inside this directory is looked up. */
  childPath(name: string): string {
    return path.join(this.selfPath(), name);
  }

  /** Reads up to `length` bytes at `position` into `buffer` at `offset`. */
  async read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return (await this.open().read(buffer, offset, length, position)).bytesRead;
  }

  /** The open directory's entries, read in batches between which the event loop turns (one
   * readdir of a directory of 100 000 names builds them all in one go); a small directory, which
   * holds a few hundred names at most, in one readdir (one trip through libuv's thread pool
   * instead of an open, two reads and a close). */
  async readEntries(slices: EventLoopSlices): Promise<Dirent[]> {
    this.open();
    if (this.stats.size > 0 && this.stats.size <= SMALL_DIRECTORY_BYTES) {
      return readdir(this.selfPath(), { withFileTypes: true });
    }
    const entries: Dirent[] = [];
    for await (const entry of await opendir(this.selfPath(), { bufferSize: DIRECTORY_BATCH })) {
      entries.push(entry);
      await slices.pause();
    }
    return entries;
  }

  async close(): Promise<void> {
    if (this.owned && this.handle) {
      await this.handle.close();
    }
  }

  private open(): FileHandle {
    if (!this.handle) {
      throw new Error(`a ${this.kind} entry has no descriptor`);
    }
    return this.handle;
  }

  private selfPath(): string {
    return hasProcFd && this.handle ? `${PROC_FD_DIR}/${this.handle.fd}` : path.join(this.workspace.root, ...this.names);
  }
}

/**
 * Opens what `names` (below the root, as workspace-path.ts parses them) lead to.
 * @param shownPath the path as the guest wrote it, for errors.
 * @throws WorkspacePathEscapeError when a link on the way leads out of the workspace.
 * @throws WorkspacePathNotFoundError when a name on the way does not exist or is not a directory.
 */
export async function openBeneath(workspace: Workspace, names: readonly string[], shownPath: string): Promise<WorkspaceEntry> {
  return openFrom(workspace, WorkspaceEntry.root(workspace), names, shownPath);
}

/**
 * Opens a guest path (relative to the workspace root, or absolute inside it).
 * @throws WorkspacePathEscapeError when it leaves the workspace: lexically (`..`, an absolute path
 * elsewhere) or through a link, one message for every way out.
 * @throws WorkspacePathNotFoundError when it is inside but does not exist.
 */
export async function openGuestPath(workspace: Workspace, input: string): Promise<WorkspaceEntry> {
  const names = guestPathNames(workspace, input);
  if (!names) {
    throw new WorkspacePathEscapeError(input);
  }
  return openBeneath(workspace, names, input);
}

/** Opens `name` inside the open directory `directory` (following a link there as `openBeneath`). */
export async function openChild(workspace: Workspace, directory: WorkspaceEntry, name: string, shownPath: string): Promise<WorkspaceEntry> {
  return openFrom(workspace, directory, [name], shownPath);
}

/**
 * Opens the directory `name` inside `directory` itself, never through a symlink (walks descend only
 * real directories: no cycles, no second copy of a subtree).
 * @returns undefined when it is no longer a directory there (gone, or swapped for anything else).
 */
export async function openSubdirectory(workspace: Workspace, directory: WorkspaceEntry, name: string): Promise<WorkspaceEntry | undefined> {
  const handle = await openName(directory.childPath(name), true, name).catch(() => undefined);
  if (!handle) {
    return undefined;
  }
  const entry = await describe(workspace, [...directory.names, name], handle);
  if (entry.kind !== 'directory') {
    await entry.close();
    return undefined;
  }
  return entry;
}

async function openFrom(
  workspace: Workspace,
  start: WorkspaceEntry,
  pending: readonly string[],
  shownPath: string,
): Promise<WorkspaceEntry> {
  let current = start;
  let todo = pending;
  let index = 0;
  let hops = 0;
  const leave = async (entry: WorkspaceEntry): Promise<void> => {
    if (entry !== start) {
      await entry.close();
    }
  };
  const hop = (): void => {
    hops += 1;
    if (hops > MAX_LINK_HOPS) {
      throw new LinkLoopError();
    }
  };
  try {
    while (index < todo.length) {
      const name = todo[index];
      const last = index === todo.length - 1;
      const at = current.childPath(name);
      const info = await lstat(at).catch((error: unknown) => {
        throw isMissing(error) ? new WorkspacePathNotFoundError(shownPath) : error;
      });
      if (info.isSymbolicLink()) {
        hop();
        const text = await readlink(at).catch((error: unknown) => {
          throw isMissing(error) ? new WorkspacePathNotFoundError(shownPath) : error;
        });
        const target = linkTargetNames(workspace, current.names, text);
        if (!target) {
          throw new WorkspacePathEscapeError(shownPath);
        }
        todo = [...target, ...todo.slice(index + 1)];
        index = 0;
        await leave(current);
        current = WorkspaceEntry.root(workspace);
        continue;
      }
      if (!last && !info.isDirectory()) {
        throw new WorkspacePathNotFoundError(shownPath);
      }
      if (!info.isDirectory() && !info.isFile()) {
        await leave(current);
        return new WorkspaceEntry(workspace, [...current.names, name], 'other', info, undefined, true);
      }
      const opened = await openName(at, info.isDirectory(), shownPath);
      if (!opened) {
        hop(); // swapped for a symlink since the lstat: look at it again
        continue;
      }
      const entry = await describe(workspace, [...current.names, name], opened);
      if (!last && entry.kind !== 'directory') {
        await entry.close();
        throw new WorkspacePathNotFoundError(shownPath);
      }
      await leave(current);
      current = entry;
      index += 1;
    }
    return current;
  } catch (error) {
    await leave(current);
    throw error;
  }
}

/** Opens one name without following it; undefined when it turned into a symlink meanwhile. */
async function openName(at: string, directory: boolean, shownPath: string): Promise<FileHandle | undefined> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | (directory ? constants.O_DIRECTORY : 0);
  try {
    return await open(at, flags);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ELOOP' || (directory && code === 'ENOTDIR')) {
      return undefined;
    }
    throw code === 'ENOENT' ? new WorkspacePathNotFoundError(shownPath) : error;
  }
}

/** The entry for an opened descriptor, by what `fstat` says it is; a FIFO or device swapped in
 * since the `lstat` (opened without blocking) is closed at once and described only. */
async function describe(workspace: Workspace, names: string[], handle: FileHandle): Promise<WorkspaceEntry> {
  let stats: Stats;
  try {
    stats = await handle.stat();
  } catch (error) {
    await handle.close();
    throw error;
  }
  const kind: EntryKind = stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
  if (kind === 'other') {
    await handle.close();
    return new WorkspaceEntry(workspace, names, kind, stats, undefined, true);
  }
  return new WorkspaceEntry(workspace, names, kind, stats, handle, true);
}
