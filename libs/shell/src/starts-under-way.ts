/** One command still starting: where, and whether its workspace was ended meanwhile. */
export interface StartUnderWay {
  readonly workspace: string;
  /** Its workspace was ended (its session deleted): it goes no further, or stops what it started. */
  ended: boolean;
  /** Past the read-only checks: from here on it may make the workspace folder and spawn in it. */
  pastChecks: boolean;
}

/**
 * The commands a worker is still starting (checks, workspace, spawn). They are not yet sessions
 * that `endIn` or `shutdown` could end, so those mark them and wait for them to settle: a start
 * that overlaps its session's deletion neither runs on nor re-creates the folder after it is gone.
 */
export class StartsUnderWay {
  private readonly starts = new Map<StartUnderWay, Promise<void>>();

  /** A start in `workspace`, tracked until `started` settles. */
  begin<T>(workspace: string, launch: (start: StartUnderWay) => Promise<T>): Promise<T> {
    const start: StartUnderWay = { workspace, ended: false, pastChecks: false };
    const started = launch(start);
    this.starts.set(
      start,
      started.then(
        () => undefined,
        () => undefined,
      ),
    );
    return started.finally(() => this.starts.delete(start));
  }

  /**
   * Marks the starts in `workspace` as ended. Resolves once those past their checks have settled;
   * the others only read so far and go no further.
   */
  endIn(workspace: string): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const [start, settled] of this.starts) {
      if (start.workspace !== workspace) continue;
      start.ended = true;
      if (start.pastChecks) waits.push(settled);
    }
    return Promise.all(waits).then(() => undefined);
  }

  /** Whether a start is under way in `workspace`. */
  in(workspace: string): boolean {
    for (const start of this.starts.keys()) if (start.workspace === workspace) return true;
    return false;
  }

  /** Resolves once every start now under way has settled. */
  settled(): Promise<void> {
    return Promise.all(this.starts.values()).then(() => undefined);
  }
}
