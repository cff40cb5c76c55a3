import type { SessionRef } from '@codemode/contracts';
import type { Redis } from 'ioredis';
import type { KeySpace } from './keys';
import { guard } from './redis';

/** A parked run the index says is due: its session, id, and when it expires (epoch ms). */
export interface DueParkedRun {
  ref: SessionRef;
  runId: string;
  expiresAt: number;
}

/**
 * Every parked run by expiry time, across sessions: lets any worker end a parked run whose
 * holder is gone (released for replay, or its worker died) once nobody waited for it within
 * snapshotTtlSeconds. One member per run, rescored when it parks again; the run's own hash stays
 * the truth (a member may outlive its run).
 */
export class ParkedRunIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
  ) {}

  async add(ref: SessionRef, runId: string, expiresAt: number): Promise<void> {
    await guard(() => this.redis.zadd(this.key(), expiresAt, member(ref, runId)));
  }

  /** Up to `limit` runs due by `now`, oldest first. */
  async due(now: number, limit: number): Promise<DueParkedRun[]> {
    const raw = await guard(() => this.redis.zrangebyscore(this.key(), 0, now, 'WITHSCORES', 'LIMIT', 0, limit));
    const due: DueParkedRun[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const parsed = parseMember(raw[i]);
      if (parsed) due.push({ ...parsed, expiresAt: Number(raw[i + 1]) });
    }
    return due;
  }

  /** Looks at the run again at `at` (its holder was alive, or it parked again). */
  async postpone(ref: SessionRef, runId: string, at: number): Promise<void> {
    await guard(() => this.redis.zadd(this.key(), at, member(ref, runId)));
  }

  async remove(ref: SessionRef, runId: string): Promise<void> {
    await guard(() => this.redis.zrem(this.key(), member(ref, runId)));
  }

  private key(): string {
    return this.keys.parkedIndex();
  }
}

function member(ref: SessionRef, runId: string): string {
  return JSON.stringify([ref.tenant, ref.sessionId, runId]);
}

function parseMember(text: string): { ref: SessionRef; runId: string } | null {
  try {
    const [tenant, sessionId, runId] = JSON.parse(text) as unknown[];
    if (typeof tenant !== 'string' || typeof sessionId !== 'string' || typeof runId !== 'string') return null;
    return { ref: { tenant, sessionId }, runId };
  } catch {
    return null;
  }
}
