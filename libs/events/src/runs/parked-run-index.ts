import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { guard } from '../platform/redis';
import { keySlot } from '../platform/cluster-slots';

/**
 * Each index is split into this many sorted sets, each under its own hash tag, by the session's
 * slot: on a Redis Cluster the per-exec writes spread over the primaries instead of loading the
 * one that would hold a single index (SPEC §13). Readers look at every part.
 */
export const RUN_INDEX_PARTS = 16;

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
    private readonly keys: KeySpace,
    private readonly part: (part: number) => string,
  ) {}

  async add(ref: SessionRef, runId: string, at: number): Promise<void> {
    await guard(() => this.redis.zadd(this.keyOf(ref), at, member(ref, runId)));
  }

  /** Up to `limit` runs due by `now`, oldest first. */
  async due(now: number, limit: number): Promise<DueRun[]> {
    const parts = await guard(() =>
      Promise.all(
        Array.from({ length: RUN_INDEX_PARTS }, (_, i) => this.redis.zrangebyscore(this.part(i), 0, now, 'WITHSCORES', 'LIMIT', 0, limit)),
      ),
    );
    const due: DueRun[] = [];
    for (const raw of parts) {
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const parsed = parseMember(raw[i]);
        if (parsed) due.push({ ...parsed, dueAt: Number(raw[i + 1]) });
      }
    }
    return due.sort((a, b) => a.dueAt - b.dueAt).slice(0, limit);
  }

  /** Looks at the run again at `at`. */
  async postpone(ref: SessionRef, runId: string, at: number): Promise<void> {
    await guard(() => this.redis.zadd(this.keyOf(ref), at, member(ref, runId)));
  }

  async remove(ref: SessionRef, runId: string): Promise<void> {
    await guard(() => this.redis.zrem(this.keyOf(ref), member(ref, runId)));
  }

  private keyOf(ref: SessionRef): string {
    return this.part(keySlot(this.keys.sessionBase(ref)) % RUN_INDEX_PARTS);
  }
}

/**
 * Every parked run by expiry time, across sessions: lets any worker end a parked run whose
 * holder is gone (released for replay, or its worker died) once nobody waited for it within
 * snapshotTtlSeconds (ParkedRunSweeper). Rescored when it parks again.
 */
export class ParkedRunIndex extends RunDeadlineIndex {
  constructor(redis: RedisClient, keys: KeySpace) {
    super(redis, keys, (part) => keys.parkedIndex(part));
  }
}

/**
 * Every run an exec or a wait set going (requested, or resumed), by when its caller's answer is
 * due plus a lease: one still `requested` or `running` then, with nobody left to end it (the
 * API that asked died, Redis refused its end, its worker lost it), is ended by any worker
 * (LiveRunSweeper). Its worker takes it out when it parks or ends it; the sweeper forgets the rest.
 */
export class LiveRunIndex extends RunDeadlineIndex {
  constructor(redis: RedisClient, keys: KeySpace) {
    super(redis, keys, (part) => keys.liveIndex(part));
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
