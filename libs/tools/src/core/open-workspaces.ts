import { fstatSync } from 'node:fs';
import path from 'node:path';
import { closeWorkspace, openWorkspace, type Workspace } from './workspace-path';

/**
 * Keeps session workspaces' roots open between core tool calls. Opening one (its `realpath`, then
 * its descriptor and `stat` side by side) and closing it are four requests to libuv's thread pool,
 * each a wake-up of another thread on a core the cell's own threads share: about as much as the
 * `ls` itself. A run's reads come one after another into the same workspace, so the root opened for
 * the first serves the next; it is closed once no call has used it for `idleMs` (the sweep runs
 * every `idleMs`, so within twice that).
 *
 * Each call still looks at the root it is given, with an `fstat` of the open descriptor (no path
 * lookup, nothing read from a local disk: the inode is held open): a root that was removed since
 * (a deleted session's, which the worker `rm`s; `nlink` 0) is opened again by its path, as a call
 * before this cache did, so a session made again under the same id never sees its predecessor's
 * folder; and its `stat` is today's, so a directory grown past one read (`readEntries`) is read
 * in batches. Roots are keyed by the session's own path (tenant and session id), never shared
 * between sessions. At most `maxOpen` are held between calls: a new root takes the place of the
 * one idle longest, and when every held root is in use a call opens and closes its own, as
 * before. Descriptors are opened close-on-exec (libuv), so a shell command never inherits one.
 */
export class OpenWorkspaces {
  private readonly held = new Map<string, Held>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly idleMs = WORKSPACE_IDLE_MS,
    private readonly maxOpen = MAX_OPEN_WORKSPACES,
  ) {}

  /** Runs `work` with the workspace at `workspaceRoot` open (created when missing). */
  async use<T>(workspaceRoot: string, work: (workspace: Workspace) => Promise<T>): Promise<T> {
    const key = path.resolve(workspaceRoot);
    const held = await this.acquire(key);
    if (!held) {
      const workspace = await openWorkspace(key);
      try {
        return await work(workspace);
      } finally {
        // Not awaited: nothing the call answers depends on the close.
        closeWorkspace(workspace).catch(() => undefined);
      }
    }
    try {
      return await work(held.current);
    } finally {
      held.users -= 1;
      held.lastUsed = performance.now();
      if (held.retired) this.closeWhenUnused(held);
    }
  }

  /** The held root for `key`, checked and counted as used; undefined when every held root is in use. */
  private async acquire(key: string): Promise<Held | undefined> {
    // Calls that all find the root removed each retire what they found and look again: only the
    // first makes its successor, which the others then share.
    for (let existing = this.held.get(key); existing; existing = this.held.get(key)) {
      existing.users += 1;
      try {
        await existing.opened;
      } catch (error) {
        existing.users -= 1;
        throw error;
      }
      if (this.refresh(existing)) return existing;
      existing.users -= 1;
      this.retire(existing);
    }
    if (this.held.size >= this.maxOpen && !this.retireIdlest()) return undefined;
    const held = { key, users: 1, lastUsed: performance.now(), retired: false } as Held;
    held.opened = openWorkspace(key).then((workspace) => (held.current = workspace));
    this.held.set(key, held);
    this.sweepWhileHeld();
    try {
      await held.opened;
    } catch (error) {
      // A root that cannot be opened is not held: the next call tries its path again.
      if (this.held.get(key) === held) this.held.delete(key);
      throw error;
    }
    return held;
  }

  /** Makes room: retires the held root idle longest; false when every one is in use. */
  private retireIdlest(): boolean {
    let idlest: Held | undefined;
    for (const held of this.held.values()) {
      if (held.users === 0 && (!idlest || held.lastUsed < idlest.lastUsed)) idlest = held;
    }
    if (idlest) this.retire(idlest);
    return idlest !== undefined;
  }

  /** Takes the root's `stat` now; false when it was removed (the caller opens its path again). */
  private refresh(held: Held): boolean {
    try {
      const stats = fstatSync(held.current.rootDir.fd);
      if (stats.nlink === 0) return false;
      held.current = { ...held.current, rootStats: stats };
      return true;
    } catch {
      return false;
    }
  }

  /** Out of the map at once; its descriptor closed when its last call is done. */
  private retire(held: Held): void {
    if (this.held.get(held.key) === held) this.held.delete(held.key);
    held.retired = true;
    this.closeWhenUnused(held);
  }

  private closeWhenUnused(held: Held): void {
    if (held.users > 0) return;
    held.opened.then(closeWorkspace).catch(() => undefined);
  }

  /** One timer for all held roots, running only while any is held, never keeping the process up. */
  private sweepWhileHeld(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = performance.now();
      for (const held of this.held.values()) {
        if (held.users === 0 && now - held.lastUsed >= this.idleMs) this.retire(held);
      }
      if (this.held.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, this.idleMs);
    this.sweeper.unref();
  }
}

interface Held {
  readonly key: string;
  /** Sets `current` as it opens. */
  opened: Promise<Workspace>;
  /** Calls using it now. */
  users: number;
  /** When its last call ended, or it was opened (`performance.now()`). */
  lastUsed: number;
  /** Out of the map: closed once `users` is 0. */
  retired: boolean;
  /** The workspace with its root's `stat` as the last `refresh` took it. */
  current: Workspace;
}

/** How long a root no call uses stays open. */
export const WORKSPACE_IDLE_MS = 2_000;

/** Roots held open between calls at most: one descriptor each, far under a process's 1,024. */
export const MAX_OPEN_WORKSPACES = 128;

/** The roots the worker's core tool calls share. */
export const SHARED_WORKSPACES = new OpenWorkspaces();
