import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '@codemode/contracts';
import { WorkspacePathEscapeError, WorkspacePathNotFoundError } from '../errors';

/**
 * Confinement of core tool paths to the session workspace. A guest path is resolved lexically (so
 * `..` and absolute paths outside are refused before touching the disk) and through `realpath` (so
 * a symlink inside the workspace that points outside is refused with a clear error). That check is
 * advisory: a shell command can swap a path component between it and the open, so the word that
 * counts is the check on the opened descriptor (workspace-handle.ts). Errors name only what the
 * guest wrote, never the host's absolute workspace path.
 */

/** A workspace with its real (symlink-free) root. */
export interface Workspace {
  /** `realpath` of the workspace root. */
  readonly root: string;
  /** The root as configured (absolute, possibly through symlinks such as `/tmp` on macOS). */
  readonly configuredRoot: string;
}

/** A path inside the workspace. */
export interface WorkspacePath {
  /** Real absolute path on the host. Never shown to the guest. */
  readonly absolute: string;
  /** Path relative to the workspace root, with `/` separators; `.` for the root itself. */
  readonly relative: string;
}

/**
 * Opens the session workspace, creating its directory when it does not exist yet: a new session
 * has an empty workspace rather than a missing one.
 */
export async function openWorkspace(workspaceRoot: string): Promise<Workspace> {
  const lexical = path.resolve(workspaceRoot);
  await mkdir(lexical, { recursive: true });
  return { root: await realpath(lexical), configuredRoot: lexical };
}

/** True when `candidate` is `root` or below it (both absolute and normalized). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Workspace-relative display form of a real path inside the workspace. */
export function toRelative(workspace: Workspace, absolute: string): string {
  const rel = path.relative(workspace.root, absolute);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/** Joins a workspace-relative directory (`.` for the root) and a `/`-separated path below it. */
export function workspaceRelative(directory: string, relative: string): string {
  return directory === '.' ? relative : `${directory}/${relative}`;
}

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** `realpath` of the deepest existing ancestor of `absolute` (itself when it exists). */
async function realpathOfExistingAncestor(absolute: string): Promise<string> {
  let current = absolute;
  for (;;) {
    try {
      return await realpath(current);
    } catch (error) {
      const parent = path.dirname(current);
      if (!isNotFound(error) || parent === current) {
        throw error;
      }
      current = parent;
    }
  }
}

/**
 * Resolves a guest path (relative to the workspace root, or absolute inside it) to a real path.
 * @throws WorkspacePathEscapeError when it leaves the workspace, lexically or through a symlink.
 * @throws WorkspacePathNotFoundError when it is inside but does not exist.
 */
export async function resolveWorkspacePath(workspace: Workspace, input: string): Promise<WorkspacePath> {
  const raw = input.trim() === '' ? '.' : input;
  const candidate = lexicalCandidate(workspace, raw);
  if (!isInside(workspace.root, candidate)) {
    throw new WorkspacePathEscapeError(input);
  }
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (error) {
    if (!isNotFound(error)) {
      throw error;
    }
    // A missing path below a symlink that leaves the workspace is still an escape, not "not found".
    const ancestor = await realpathOfExistingAncestor(candidate);
    if (!isInside(workspace.root, ancestor)) {
      throw new WorkspacePathEscapeError(input);
    }
    throw new WorkspacePathNotFoundError(input);
  }
  if (!isInside(workspace.root, real)) {
    throw new WorkspacePathEscapeError(input);
  }
  return { absolute: real, relative: toRelative(workspace, real) };
}

/**
 * Absolute lexical form of a guest path. An absolute path written against the configured (not yet
 * real) root, e.g. `/tmp/ws/a.txt` when `/tmp` is a symlink, is rebased onto the real root; so is
 * one under `/workspace`, where the model's shell commands see the same folder.
 */
function lexicalCandidate(workspace: Workspace, raw: string): string {
  if (!path.isAbsolute(raw)) {
    return path.resolve(workspace.root, raw);
  }
  const normalized = path.resolve(raw);
  if (workspace.configuredRoot !== workspace.root && isInside(workspace.configuredRoot, normalized)) {
    return path.join(workspace.root, path.relative(workspace.configuredRoot, normalized));
  }
  if (!isInside(workspace.root, normalized) && isInside(WORKSPACE_MOUNT, normalized)) {
    return path.join(workspace.root, path.relative(WORKSPACE_MOUNT, normalized));
  }
  return normalized;
}
