import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from './redis';
import type { KeySpace } from './keys';
import { guard } from './redis';

/** A run an index says is due: its session, id, and the time it was due at (epoch ms). */
export interface DueRun {
  ref: SessionRef;
  runId: string;
  dueAt: number;
}

/**
 * Runs of every session by a time at which someone must look at them (one member per run,
 * rescored when it is looked at again); the run's own hash stays the truth (a member may outlive
 * its run). Which runs and which time is the subclass's.
 */
abstract class RunDeadlineIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {}

  async add(ref: SessionRef, runId: string, at: number): Promise<void> {
    await guard(() => this.redis.zadd(this.key, at, member(ref, runId)));
  }

  /** Up to `limit` runs due by `now`, oldest first. */
  async due(now: number, limit: number): Promise<DueRun[]> {
    const raw = await guard(() => this.redis.zrangebyscore(this.key, 0, now, 'WITHSCORES', 'LIMIT', 0, limit));
    const due: DueRun[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const parsed = parseMember(raw[i]);
      if (parsed) due.push({ ...parsed, dueAt: Number(raw[i + 1]) });
    }
    return due;
  }

  /** Looks at the run again at `at`. */
  async postpone(ref: SessionRef, runId: string, at: number): Promise<void> {
    await guard(() => this.redis.zadd(this.key, at, member(ref, runId)));
  }

  async remove(ref: SessionRef, runId: string): Promise<void> {
    await guard(() => this.redis.zrem(this.key, member(ref, runId)));
  }
}

/**
 * Every parked run by expiry time, across sessions: lets any worker end a parked run whose
 * holder is gone (released for replay, or its worker died) once nobody waited for it within
 * snapshotTtlSeconds (ParkedRunSweeper). Rescored when it parks again.
 */
export class ParkedRunIndex extends RunDeadlineIndex {
  constructor(redis: RedisClient, keys: KeySpace) {
    super(redis, keys.parkedIndex());
  }
}

/**
 * Every run an exec or a wait set going (requested, or resumed), by when its caller's answer is
 * due plus a lease: one still `requested` or `running` then, with nobody left to end it (the
 * API that asked died, RedisClient refused its end, its worker lost it), is ended by any worker
 * (LiveRunSweeper). Its worker takes it out when it parks or ends it; the sweeper forgets the rest.
 */
export class LiveRunIndex extends RunDeadlineIndex {
  constructor(redis: RedisClient, keys: KeySpace) {
    super(redis, keys.liveIndex());
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
