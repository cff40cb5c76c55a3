import { constants, type Stats } from 'node:fs';
import { mkdir, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '@codemode/contracts';

/**
 * The lexical half of confining core tool paths to the session workspace (SPEC §10 "Paths tell
 * nothing"): a guest path, or the text of a symlink met on the way, becomes a list of names below
 * the workspace root, or is refused, without looking at the disk. `..` is applied to the names
 * already walked, so it can never climb above the root; an absolute path counts only when it
 * names the workspace (as the host or the shell sandbox spells it). The names are then opened one
 * by one beneath the root's descriptor (workspace-entry.ts).
 */

/** A session workspace, its root open as a directory while tool calls use it (OpenWorkspaces). */
export interface Workspace {
  /** `realpath` of the workspace root. Never shown to the guest. */
  readonly root: string;
  /** The root as configured (absolute, possibly through symlinks such as `/tmp` on macOS). */
  readonly configuredRoot: string;
  /** The root directory, opened once: every lookup starts from this descriptor. */
  readonly rootDir: FileHandle;
  /** The root's `stat`, taken as it was opened or, held open, as this call began (OpenWorkspaces). */
  readonly rootStats: Stats;
}

/**
 * Opens the session workspace, creating its directory when it does not exist yet: a new session
 * has an empty workspace rather than a missing one. The root is the worker's own directory (it
 * names the tenant and session), so it is the one path opened by name; close it with
 * `closeWorkspace`. Created only when it is missing: each file operation is a trip through libuv's
 * thread pool, and a workspace exists at every call but its session's first.
 */
export async function openWorkspace(workspaceRoot: string): Promise<Workspace> {
  const configuredRoot = path.resolve(workspaceRoot);
  const root = await realpath(configuredRoot).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT') throw error;
    await mkdir(configuredRoot, { recursive: true });
    return realpath(configuredRoot);
  });
  // Opened and looked at in two trips through the pool at once, not one after the other: the
  // root is the worker's own directory (a confined shell sees it as a mount point it cannot
  // move), so its path and its descriptor are the same directory.
  const [opened, looked] = await Promise.allSettled([
    open(root, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW),
    stat(root),
  ]);
  if (opened.status === 'rejected') throw opened.reason;
  if (looked.status === 'rejected') {
    await opened.value.close();
    throw looked.reason;
  }
  return { root, configuredRoot, rootDir: opened.value, rootStats: looked.value };
}

export function closeWorkspace(workspace: Workspace): Promise<void> {
  return workspace.rootDir.close();
}

/** True when `candidate` is `root` or below it (both absolute and normalized). */
function isInside(root: string, candidate: string): boolean {
  const rel = path.posix.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.posix.isAbsolute(rel));
}

/** Workspace-relative display form of a list of names: `/`-joined, `.` for the root. */
export function displayPath(names: readonly string[]): string {
  return names.length === 0 ? '.' : names.join('/');
}

/** Joins a workspace-relative directory (`.` for the root) and a `/`-separated path below it. */
export function workspaceRelative(directory: string, relative: string): string {
  return directory === '.' ? relative : `${directory}/${relative}`;
}

/**
 * Applies `segments` (from a `/`-separated text) to the names below the root in `base`.
 * @returns the names, or undefined when a `..` climbs above the root.
 */
function applySegments(base: readonly string[], segments: readonly string[]): string[] | undefined {
  const names = [...base];
  for (const segment of segments) {
    if (segment === '' || segment === '.') {
      continue;
    }
    if (segment === '..') {
      if (names.length === 0) {
        return undefined;
      }
      names.pop();
      continue;
    }
    names.push(segment);
  }
  return names;
}

/** Names below the root of an absolute path, when it names the workspace: through the host's real
 * or configured root, or `/workspace`, where the session's shell commands see the same folder. */
function absoluteNames(workspace: Workspace, absolute: string): string[] | undefined {
  const normalized = path.posix.normalize(absolute);
  for (const root of [workspace.root, workspace.configuredRoot, WORKSPACE_MOUNT]) {
    if (isInside(root, normalized)) {
      return applySegments([], path.posix.relative(root, normalized).split('/'));
    }
  }
  return undefined;
}

/**
 * Names below the root that a guest path (relative to the root, or absolute inside it) stands for.
 * @returns undefined when the path leaves the workspace.
 */
export function guestPathNames(workspace: Workspace, input: string): string[] | undefined {
  const raw = input.trim() === '' ? '.' : input;
  return raw.startsWith('/') ? absoluteNames(workspace, raw) : applySegments([], raw.split('/'));
}

/**
 * Names below the root that a symlink's text points to, read from the link at `directory` (the
 * names of the real directory holding it).
 * @returns undefined when the link leads out of the workspace (whether its target exists or not).
 */
export function linkTargetNames(workspace: Workspace, directory: readonly string[], text: string): string[] | undefined {
  return text.startsWith('/') ? absoluteNames(workspace, text) : applySegments(directory, text.split('/'));
}
