import type { ThreadState } from './pool-thread';

/** What placement reads of a thread (`PoolThread`). */
export interface PlacedThread {
  readonly state: ThreadState;
  readonly legsWaitingToBegin: number;
  readonly executingGuestCode: boolean;
  readonly activeLegs: number;
  readonly liveRuns: number;
  readonly warm: boolean;
}

/**
 * Where a new cell goes: a ready thread that has begun every leg it was given (so the cell starts
 * as soon as the guest code on it yields, and waits for nothing queued behind it), preferring one
 * not executing guest code right now (SPEC §10: that code may hold it until the watchdog), with
 * the fewest running legs, then the fewest live runs (a terminate loses every run of a thread),
 * then a prepared VM. Undefined when no thread may take one now.
 */
export function pickThread<T extends PlacedThread>(threads: Iterable<T>): T | undefined {
  let best: T | undefined;
  let bestKey = Infinity;
  for (const thread of threads) {
    if (thread.state !== 'ready' || thread.legsWaitingToBegin > 0) continue;
    const key = (thread.executingGuestCode ? 1e9 : 0) + thread.activeLegs * 1e6 + thread.liveRuns * 2 + (thread.warm ? 0 : 1);
    if (key < bestKey) {
      best = thread;
      bestKey = key;
    }
  }
  return best;
}
