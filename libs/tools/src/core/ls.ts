import type { Dirent } from 'node:fs';
import { WorkspacePathKindError } from '../errors';
import { SHARED_SLICES, sortInSlices } from './event-loop-slices';
import type { LsInput } from './inputs';
import { ByteBudget, clampLimit, formatSize, LS_DEFAULT_LIMIT, LS_MAX_LIMIT, MAX_OUTPUT_BYTES } from './limits';
import { openChild, openGuestPath, type WorkspaceEntry } from './workspace-entry';
import type { Workspace } from './workspace-path';

/** What `ls` returns: entry names sorted case-insensitively, directories with a `/` suffix. */
export interface LsResult {
  readonly path: string;
  readonly entries: string[];
  readonly truncated: boolean;
  readonly notice?: string;
}

/** The order `ls` shows names in: case-insensitive, by the default locale's collation. */
const collator = new Intl.Collator();

/** `/` for a directory, `` for anything else; a symlink counts as a directory only when it leads
 * to one inside the workspace (looked up beneath the root, never followed out). */
async function suffixOf(workspace: Workspace, directory: WorkspaceEntry, child: Dirent): Promise<string> {
  if (!child.isSymbolicLink()) {
    return child.isDirectory() ? '/' : '';
  }
  try {
    const target = await openChild(workspace, directory, child.name, child.name);
    await target.close();
    return target.kind === 'directory' ? '/' : '';
  } catch {
    return ''; // dangling or leading out: listed by name only
  }
}

/** Lists one workspace directory, dotfiles included, up to `limit` entries and 50 KB. */
export async function lsTool(workspace: Workspace, input: LsInput): Promise<LsResult> {
  const slices = SHARED_SLICES;
  const directory = await openGuestPath(workspace, input.path ?? '.');
  try {
    if (directory.kind !== 'directory') {
      throw new WorkspacePathKindError(directory.relative, 'directory');
    }
    const children = (await directory.readEntries(slices)).map((child) => ({ child, key: child.name.toLowerCase() }));
    await sortInSlices(children, (a, b) => collator.compare(a.key, b.key), slices);
    const limit = clampLimit(input.limit, LS_DEFAULT_LIMIT, LS_MAX_LIMIT);
    const entries: string[] = [];
    const budget = new ByteBudget(MAX_OUTPUT_BYTES);
    const notices: string[] = [];
    for (const { child } of children) {
      if (entries.length >= limit) {
        notices.push(`${limit} entries limit reached. Use limit=${Math.min(limit * 2, LS_MAX_LIMIT)} for more`);
        break;
      }
      const entry = child.name + (await suffixOf(workspace, directory, child));
      if (!budget.take(entry)) {
        notices.push(`${formatSize(MAX_OUTPUT_BYTES)} limit reached`);
        break;
      }
      entries.push(entry);
      await slices.pause();
    }
    if (notices.length === 0) {
      return { path: directory.relative, entries, truncated: false };
    }
    return { path: directory.relative, entries, truncated: true, notice: `[${notices.join('. ')}]` };
  } finally {
    await directory.close();
  }
}
