import { constants, type Dirent, type Stats } from 'node:fs';
import { open, readdir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { WorkspacePathEscapeError, WorkspacePathNotFoundError } from '../errors';
import { isInside, type Workspace } from './workspace-path';

/**
 * A file or directory of the workspace, opened and then checked on its descriptor. Checking a
 * path and opening it later leaves a window in which a shell command of the session can swap a
 * path component for a symlink leading out; so the tools open first and ask the kernel where the
 * open descriptor really is (`/proc/self/fd/<fd>`), refusing it unless that is inside the
 * workspace, and read only through the descriptor.
 */

/** Where the kernel shows a process's open descriptors: reading the link gives the real path of
 * the open file, and a lookup through it lands on the open file itself, whatever its path now is. */
const PROC_FD_DIR = '/proc/self/fd';

export interface OpenOptions {
  /** Open only a directory, never through a symlink as the last component: walks do not
   * descend symlinked directories, also ones swapped in after the directory was listed. */
  readonly directory?: boolean;
  /** The `/proc/self/fd` to consult; a missing one selects the fallback (tests use this). */
  readonly procFdDir?: string;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

interface Location {
  /** Real path of the open file. */
  readonly realPath: string;
  /** Path through which to list the open directory. */
  readonly listPath: string;
}

/**
 * Where the open descriptor is. Without /proc (macOS development) the next best thing: the real
 * path of what was opened, accepted only when it is still the very file the descriptor holds
 * (same device and inode). That catches a symlink that was in place at open time, though not one
 * swapped in and back out around the check; deployments run on Linux, where /proc answers.
 */
async function locate(handle: FileHandle, stats: Stats, absolute: string, procFdDir: string): Promise<Location | undefined> {
  const fdPath = `${procFdDir}/${handle.fd}`;
  try {
    return { realPath: await readlink(fdPath), listPath: fdPath };
  } catch (error) {
    if (!isMissing(error)) {
      throw error;
    }
  }
  const real = await realpath(absolute);
  const current = await stat(real);
  return current.dev === stats.dev && current.ino === stats.ino ? { realPath: real, listPath: real } : undefined;
}

export class WorkspaceHandle {
  private constructor(
    private readonly handle: FileHandle,
    /** `fstat` of the descriptor: the kind and size of what was actually opened. */
    readonly stats: Stats,
    private readonly location: Location,
  ) {}

  /**
   * Opens `absolute` (a real path found inside the workspace) and checks the descriptor. Opened
   * non-blocking, so a FIFO swapped in cannot hang the call; nothing is read before the check.
   * @param shownPath the path as the guest wrote it, for errors.
   * @throws WorkspacePathEscapeError when the descriptor is outside the workspace.
   * @throws WorkspacePathNotFoundError when the path no longer exists.
   */
  static async open(workspace: Workspace, absolute: string, shownPath: string, options: OpenOptions = {}): Promise<WorkspaceHandle> {
    const flags = constants.O_RDONLY | constants.O_NONBLOCK | (options.directory ? constants.O_DIRECTORY | constants.O_NOFOLLOW : 0);
    let handle: FileHandle;
    try {
      handle = await open(absolute, flags);
    } catch (error) {
      throw isMissing(error) ? new WorkspacePathNotFoundError(shownPath) : error;
    }
    try {
      const stats = await handle.stat();
      const location = await locate(handle, stats, absolute, options.procFdDir ?? PROC_FD_DIR);
      if (!location || !isInside(workspace.root, location.realPath)) {
        throw new WorkspacePathEscapeError(shownPath);
      }
      return new WorkspaceHandle(handle, stats, location);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Real path of the open file or directory, inside the workspace. */
  get realPath(): string {
    return this.location.realPath;
  }

  /** The file's bytes, as many as `fstat` reported when it was opened (a file growing meanwhile
   * cannot push a read past the size limits its caller checked). */
  async readBytes(): Promise<Buffer> {
    const buffer = Buffer.alloc(this.stats.size);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await this.handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) {
        break;
      }
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  }

  /** The open directory's entries. */
  readEntries(): Promise<Dirent[]> {
    return readdir(this.location.listPath, { withFileTypes: true });
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
