import { mkdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkdirMissingError, WorkdirOutsideWorkspaceError } from './errors';

/**
 * Resolves `workdir` inside `root`: relative paths resolve under the root, absolute ones must lie
 * within it. Symlinks are resolved before the check, so a link pointing out is refused too. The
 * root itself is created when missing (a fresh session has no files yet).
 *
 * `shownRoot` is the root as the command sees it (`/workspace` in a sandbox): absolute workdirs
 * are read against it, and errors name it instead of the host path.
 */
export async function resolveWorkdir(root: string, workdir: string | undefined, shownRoot?: string): Promise<string> {
  const absoluteRoot = path.resolve(root);
  await mkdir(absoluteRoot, { recursive: true });
  const realRoot = await realpath(absoluteRoot);
  const display = shownRoot ?? realRoot;
  if (workdir === undefined || workdir.trim() === '') return realRoot;
  const candidate =
    shownRoot !== undefined && path.isAbsolute(workdir) ? rebase(workdir, shownRoot, realRoot) : path.resolve(realRoot, workdir);
  if (candidate === undefined || !within(realRoot, candidate)) throw new WorkdirOutsideWorkspaceError(workdir, display);
  let real: string;
  try {
    real = await realpath(candidate);
    if (!(await stat(real)).isDirectory()) throw new WorkdirMissingError(workdir);
  } catch (err) {
    if (err instanceof WorkdirMissingError) throw err;
    throw new WorkdirMissingError(workdir);
  }
  if (!within(realRoot, real)) throw new WorkdirOutsideWorkspaceError(workdir, display);
  return real;
}

/** The path as it appears inside (`/workspace/...`) for a real path under `realRoot`. */
export function shownPath(realRoot: string, real: string, shownRoot: string): string {
  const rel = path.relative(realRoot, real);
  return rel === '' ? shownRoot : path.posix.join(shownRoot, rel.split(path.sep).join('/'));
}

/** An absolute path written against `shownRoot`, moved onto the real root; undefined when outside it. */
function rebase(workdir: string, shownRoot: string, realRoot: string): string | undefined {
  const normalized = path.posix.resolve(workdir);
  if (!within(shownRoot, normalized)) return undefined;
  return path.join(realRoot, path.posix.relative(shownRoot, normalized));
}

function within(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
