import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { guard } from '../platform/redis';

/** A `restartSafe` leg a worker runs, as the index holds it. */
export interface RunningLeg {
  ref: SessionRef;
  runId: string;
  /** Where the leg's caller listens for its answer (the job's `replyTo`). */
  replyTo: string;
  /** When the leg's caller has answered or given up (epoch ms): its budget, the reply grace and a lease from the leg's start. */
  answeredBy: number;
}

/**
 * SPEC §17 "rebuilt at once, caller or not": the `restartSafe` legs each worker runs, by owner
 * (one hash per worker, in its own slot), so the worker that notices an owner's lease lapsed
 * finds that owner's legs without a caller or a sweep. The owner adds a leg beside the script that
 * makes it the run's (claim, resume, takeover) and removes it when the leg parks or ends. The run
 * stays the truth: an entry whose run is not running under that owner is dropped by its reader;
 * a running leg the index missed (its write failed) is still found by the live-run sweep.
 */
export class RunningLegIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async add(owner: string, leg: RunningLeg): Promise<void> {
    const value = JSON.stringify([leg.replyTo, leg.answeredBy]);
    await guard(() => this.redis.hset(this.keys.runningLegs(owner), field(leg.ref, leg.runId), value));
  }

  /** The leg parked or ended (or was never taken); the owner's hash goes with its last leg. */
  async remove(owner: string, ref: SessionRef, runId: string): Promise<void> {
    await guard(() => this.redis.hdel(this.keys.runningLegs(owner), field(ref, runId)));
  }

  /** Every entry of a departed owner (the queue janitor, with its queue): what its lapse left is the live-run sweep's. */
  async drop(owner: string): Promise<void> {
    await guard(() => this.redis.del(this.keys.runningLegs(owner)));
  }

  /**
   * Up to about `limit` of `owner`'s legs (one HSCAN from the start: a reader removes what it has
   * dealt with, so its next read finds the rest). An entry that cannot be read is removed here.
   */
  async legsOf(owner: string, limit: number): Promise<RunningLeg[]> {
    const key = this.keys.runningLegs(owner);
    const [, flat] = await guard(() => this.redis.hscan(key, '0', 'COUNT', limit));
    const legs: RunningLeg[] = [];
    const unreadable: string[] = [];
    for (let i = 0; i + 1 < flat.length && legs.length < limit; i += 2) {
      const leg = parseLeg(flat[i], flat[i + 1]);
      if (leg) legs.push(leg);
      else unreadable.push(flat[i]);
    }
    if (unreadable.length > 0) await guard(() => this.redis.hdel(key, ...unreadable));
    return legs;
  }
}

function field(ref: SessionRef, runId: string): string {
  return JSON.stringify([ref.tenant, ref.sessionId, runId]);
}

function parseLeg(name: string, value: string): RunningLeg | null {
  try {
    const [tenant, sessionId, runId] = JSON.parse(name) as unknown[];
    const [replyTo, answeredBy] = JSON.parse(value) as unknown[];
    if (typeof tenant !== 'string' || typeof sessionId !== 'string' || typeof runId !== 'string') return null;
    if (typeof replyTo !== 'string' || typeof answeredBy !== 'number') return null;
    return { ref: { tenant, sessionId }, runId, replyTo, answeredBy };
  } catch {
    return null;
  }
}
