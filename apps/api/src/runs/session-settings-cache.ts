import type { SessionRef } from '@codemode/contracts';
import type { SessionSettingsAt } from '@codemode/events';

/** Sessions whose settings one API process keeps; least recently used go first. */
const DEFAULT_MAX_SESSIONS = 4096;

/**
 * The settings each session's execs last ran with, in this API process, so an exec needs no read
 * before its `request-run`. Never trusted: request-run compares the version with the session's
 * `configVersion` in the same script and writes nothing when the session was configured since
 * (another API process may have done it), so a stale entry costs one read again, never a run with
 * old limits. Bounded, so a tenant opening many sessions cannot grow it.
 */
export class SessionSettingsCache {
  private readonly entries = new Map<string, SessionSettingsAt>();

  constructor(private readonly maxSessions = DEFAULT_MAX_SESSIONS) {}

  get(ref: SessionRef): SessionSettingsAt | undefined {
    const key = keyOf(ref);
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(ref: SessionRef, at: SessionSettingsAt): void {
    const key = keyOf(ref);
    this.entries.delete(key);
    this.entries.set(key, at);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxSessions) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Tenant and session id, delimited so no pair of names can meet in one key. */
function keyOf(ref: SessionRef): string {
  return JSON.stringify([ref.tenant, ref.sessionId]);
}
