import type { ProcessSession } from './process-session';

/** Finished sessions kept per scope (SPEC §7), and their total retained output. */
export const MAX_FINISHED_SESSIONS = 50;
export const MAX_FINISHED_OUTPUT_CHARS = 2_000_000;
/** Bounds of how long a finished session is kept (`cleanupMs`). */
export const MIN_CLEANUP_MS = 60_000;
export const MAX_CLEANUP_MS = 10_800_000;

const clampCleanup = (ms: number) => Math.min(Math.max(ms, MIN_CLEANUP_MS), MAX_CLEANUP_MS);

/**
 * The sessions of one worker. Ids are unique across the worker; every lookup also checks the
 * scope, so a session of another agent is simply "not found".
 *
 * Only backgrounded sessions are visible: a command that finished in the foreground already gave
 * its whole answer, so it is neither listed nor kept. Finished sessions are kept `cleanupMs`
 * (clamped 1 min–3 h), at most 50 and 2,000,000 chars per scope, evicting in completion order.
 */
export class SessionStore {
  private readonly running = new Map<string, ProcessSession>();
  private readonly finished = new Map<string, ProcessSession>();

  constructor(private readonly now: () => number) {}

  isTaken(id: string): boolean {
    return this.running.has(id) || this.finished.has(id);
  }

  addRunning(session: ProcessSession): void {
    this.running.set(session.id, session);
    void session.done.then(() => this.onExit(session));
  }

  getRunning(scope: string, id: string): ProcessSession | undefined {
    const session = this.running.get(id);
    return session?.scope === scope && !session.exited && !session.removed ? session : undefined;
  }

  getFinished(scope: string, id: string): ProcessSession | undefined {
    this.sweep();
    const session = this.finished.get(id);
    return session?.scope === scope ? session : undefined;
  }

  /** Backgrounded running sessions and kept finished ones of `scope`. */
  visible(scope: string): ProcessSession[] {
    this.sweep();
    const out: ProcessSession[] = [];
    for (const s of this.running.values()) if (s.scope === scope && s.backgrounded && !s.removed && !s.exited) out.push(s);
    for (const s of this.finished.values()) if (s.scope === scope) out.push(s);
    return out;
  }

  /** Every live session, for shutdown. */
  allRunning(): ProcessSession[] {
    return [...this.running.values()];
  }

  allFinished(): ProcessSession[] {
    return [...this.finished.values()];
  }

  /** Forgets a session: a running one is dropped from view (its exit is not kept). */
  delete(id: string): void {
    const running = this.running.get(id);
    if (running) running.removed = true;
    this.finished.delete(id);
  }

  /** Drops finished sessions past their `cleanupMs`. */
  sweep(): void {
    const now = this.now();
    for (const [id, s] of this.finished) {
      if ((s.endedAt ?? now) + clampCleanup(s.cleanupMs) <= now) this.finished.delete(id);
    }
  }

  private onExit(session: ProcessSession): void {
    if (this.running.get(session.id) === session) this.running.delete(session.id);
    if (!session.backgrounded || session.removed) return;
    this.finished.set(session.id, session);
    this.enforceCaps(session.scope);
  }

  private enforceCaps(scope: string): void {
    const mine = [...this.finished.values()].filter((s) => s.scope === scope);
    let chars = mine.reduce((sum, s) => sum + s.aggregated.length, 0);
    // Oldest first; the newest one is always kept, even when it alone is over the char budget.
    while (mine.length > MAX_FINISHED_SESSIONS || (mine.length > 1 && chars > MAX_FINISHED_OUTPUT_CHARS)) {
      const oldest = mine.shift()!;
      chars -= oldest.aggregated.length;
      this.finished.delete(oldest.id);
    }
  }
}
