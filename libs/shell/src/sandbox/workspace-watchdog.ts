import type { WorkspaceUsage } from './workspace-usage';

/** What the watchdog needs of a running command. */
export interface WatchedCommand {
  /** The sandbox's first process (bubblewrap): it and its descendants are the command. */
  readonly pid: number;
  readonly done: Promise<void>;
  /** Ends the command at once, with `reason` as what its answers say. */
  stop(reason: string): void;
}

/**
 * Shortest pause between two walks of one workspace. With the walk itself this bounds how long a
 * command runs past a limit (SPEC §10: within 1 s); the pause grows to the last walk's duration,
 * so a large workspace never keeps the walker thread busy more than half the time.
 */
export const WATCH_MIN_GAP_MS = 200;

/**
 * Holds `CODEMODE_WORKSPACE_MAX_BYTES` and `CODEMODE_WORKSPACE_MAX_FILES` while commands run
 * (SPEC §10 "Sandbox filesystems"): a workspace with at least one running command is measured
 * again and again, and once it is over a limit every running command of it is stopped with the
 * limit's message. The next call is then refused by `WorkspaceUsage` until files are removed.
 *
 * Why a watchdog and not a kernel limit: a size-capped filesystem per workspace (a loop-mounted
 * image) needs root, loop devices and mkfs on every worker, and a project quota needs an ext4 or
 * xfs mounted with `prjquota`; neither is there in an ordinary container. The watchdog works
 * anywhere, at the cost of an overrun of at most one gap plus two walks of writing.
 */
export class WorkspaceWatchdog {
  private readonly watched = new Map<string, Set<WatchedCommand>>();

  constructor(private readonly usage: WorkspaceUsage) {}

  watch(workspace: string, command: WatchedCommand): void {
    let commands = this.watched.get(workspace);
    if (!commands) {
      commands = new Set();
      this.watched.set(workspace, commands);
      void this.patrol(workspace, commands);
    }
    commands.add(command);
    const watching = commands;
    void command.done.then(() => {
      watching.delete(command);
      if (watching.size === 0 && this.watched.get(workspace) === watching) this.watched.delete(workspace);
    });
  }

  private async patrol(workspace: string, commands: Set<WatchedCommand>): Promise<void> {
    while (this.watched.get(workspace) === commands) {
      const started = Date.now();
      const pids = [...commands].map((command) => command.pid);
      const overrun = this.usage.overrunOf(await this.usage.measure(workspace, pids));
      if (overrun) for (const command of commands) command.stop(this.usage.stopText(overrun));
      const walkMs = Date.now() - started;
      await new Promise((resolve) => setTimeout(resolve, Math.max(WATCH_MIN_GAP_MS, walkMs)));
    }
  }
}
