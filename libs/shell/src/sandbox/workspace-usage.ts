import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Disk use of session workspaces, for `CODEMODE_WORKSPACE_MAX_BYTES` (SPEC §10). A workspace is
 * measured when a command of it exits (off the caller's path) and, while it is over, again before
 * each call, so removing files lets the next call through. Allocated blocks are counted, not
 * apparent sizes: a sparse file costs what it occupies.
 */
export class WorkspaceUsage {
  private readonly bytes = new Map<string, number>();
  /** Measurements under way: the next call waits for the one its previous command started. */
  private readonly measuring = new Map<string, Promise<number>>();

  constructor(readonly maxBytes: number) {}

  /** Bytes over the limit decide a refusal; a workspace never measured on this worker is measured now. */
  async isOver(workspace: string): Promise<boolean> {
    await this.measuring.get(workspace);
    const known = this.bytes.get(workspace);
    if (known !== undefined && known <= this.maxBytes) return false;
    return (await this.measure(workspace)) > this.maxBytes;
  }

  /** Measures again (after a command exits); errors leave the last figure. */
  measure(workspace: string): Promise<number> {
    const running = diskUse(workspace)
      .catch(() => this.bytes.get(workspace) ?? 0)
      .then((total) => {
        this.bytes.set(workspace, total);
        if (this.measuring.get(workspace) === running) this.measuring.delete(workspace);
        return total;
      });
    this.measuring.set(workspace, running);
    return running;
  }

  forget(workspace: string): void {
    this.bytes.delete(workspace);
  }
}

/** Allocated bytes of everything below `dir`, never following symbolic links. */
async function diskUse(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue; // removed while we walked, or unreadable: nothing to count
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      const info = await lstat(full).catch(() => undefined);
      if (!info) continue;
      total += info.blocks * 512;
      if (info.isDirectory()) pending.push(full);
    }
  }
  return total;
}
