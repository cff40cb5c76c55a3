import { WorkspaceOverFileLimitError, WorkspaceOverLimitError, type ShellToolError } from '../errors';
import { texts } from '../texts';
import { WorkspaceWalker, type WorkspaceFigures } from './workspace-walker';

/** `CODEMODE_WORKSPACE_MAX_BYTES` and `CODEMODE_WORKSPACE_MAX_FILES` (SPEC §10). */
export interface WorkspaceLimits {
  readonly maxBytes: number;
  readonly maxFiles: number;
}

/** Which limit a workspace is over. */
export type WorkspaceOverrun = 'size' | 'files';

/**
 * Disk use and entry count of session workspaces (SPEC §10), the one owner of both limits. A
 * workspace is measured while its commands run (see `WorkspaceWatchdog`), when a command of it
 * exits, and, while it is over, again before each call, so removing files lets the next call
 * through. Allocated blocks are counted, not apparent sizes: a sparse file costs what it occupies.
 * Walks run on the walker's own thread and stop as soon as a limit is passed.
 */
export class WorkspaceUsage {
  private readonly figures = new Map<string, WorkspaceFigures>();
  /** Measurements under way: the next call waits for the one its previous command started. */
  private readonly measuring = new Map<string, Promise<WorkspaceFigures>>();
  private readonly walker = new WorkspaceWalker();

  constructor(readonly limits: WorkspaceLimits) {}

  /** Which limit decides a refusal; a workspace never measured on this worker is measured now. */
  async overrun(workspace: string): Promise<WorkspaceOverrun | null> {
    await this.measuring.get(workspace);
    const known = this.figures.get(workspace);
    if (known && this.overrunOf(known) === null) return null;
    return this.overrunOf(await this.measure(workspace));
  }

  /**
   * Measures again (while commands run, with their pids, and after one exits); a failed walk
   * leaves the last figure.
   */
  measure(workspace: string, pids: readonly number[] = []): Promise<WorkspaceFigures> {
    const bounds = { bytes: this.limits.maxBytes, entries: this.limits.maxFiles };
    const running = this.walker
      .measure(workspace, bounds, pids)
      .catch(() => this.figures.get(workspace) ?? { bytes: 0, entries: 0, unmeasurable: false })
      .then((figures) => {
        this.figures.set(workspace, figures);
        if (this.measuring.get(workspace) === running) this.measuring.delete(workspace);
        return figures;
      });
    this.measuring.set(workspace, running);
    return running;
  }

  /** A tree too deep to walk counts as over its file limit: what it holds below cannot be counted. */
  overrunOf(figures: WorkspaceFigures): WorkspaceOverrun | null {
    if (figures.bytes > this.limits.maxBytes) return 'size';
    if (figures.entries > this.limits.maxFiles || figures.unmeasurable) return 'files';
    return null;
  }

  /** The refusal of a new command while the workspace is over. */
  refusal(overrun: WorkspaceOverrun): ShellToolError {
    return overrun === 'size' ? new WorkspaceOverLimitError(this.limits.maxBytes) : new WorkspaceOverFileLimitError(this.limits.maxFiles);
  }

  /** What a command stopped for passing a limit says. */
  stopText(overrun: WorkspaceOverrun): string {
    return overrun === 'size' ? texts.workspaceSizeStopped(this.limits.maxBytes) : texts.workspaceFilesStopped(this.limits.maxFiles);
  }

  close(): Promise<void> {
    return this.walker.close();
  }
}
