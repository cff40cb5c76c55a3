import { mkdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkdirMissingError, WorkdirOutsideWorkspaceError } from './errors';

/**
 * Resolves `workdir` inside `root`: relative paths resolve under the root, absolute ones must lie
 * within it. Symlinks are resolved before the check, so a link pointing out is refused too. The
 * root itself is created when missing (a fresh session has no files yet).
 */
export async function resolveWorkdir(root: string, workdir: string | undefined): Promise<string> {
  const absoluteRoot = path.resolve(root);
  await mkdir(absoluteRoot, { recursive: true });
  const realRoot = await realpath(absoluteRoot);
  if (workdir === undefined || workdir.trim() === '') return realRoot;
  const candidate = path.resolve(realRoot, workdir);
  if (!within(realRoot, candidate)) throw new WorkdirOutsideWorkspaceError(workdir, realRoot);
  let real: string;
  try {
    real = await realpath(candidate);
    if (!(await stat(real)).isDirectory()) throw new WorkdirMissingError(workdir);
  } catch (err) {
    if (err instanceof WorkdirMissingError) throw err;
    throw new WorkdirMissingError(workdir);
  }
  if (!within(realRoot, real)) throw new WorkdirOutsideWorkspaceError(workdir, realRoot);
  return real;
}

function within(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
