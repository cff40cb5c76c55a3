import type { RunView, SessionRef } from '@codemode/contracts';
import { runFromHash } from '../log/projections/views';
import type { KeySpace } from '../platform/keys';
import { guard, type RedisClient } from '../platform/redis';
import type { ScriptLoader } from '../platform/script-loader';

/** A run as read whole: its view (null when its hash is gone) and the hash's own fields. */
export interface RunRead {
  view: RunView | null;
  hash: Record<string, string>;
}

/**
 * Reads a run with its last result in one round trip (lua/read-run.lua): the hash names the event
 * that carries the result, and the script reads that event beside the hash.
 */
export async function readRun(redis: RedisClient, keys: KeySpace, scripts: ScriptLoader, ref: SessionRef, runId: string): Promise<RunRead> {
  const reply = (await guard(() => scripts.run(redis, 'read-run', [keys.run(ref, runId), keys.events(ref)], []))) as [string[], string];
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < reply[0].length; i += 2) hash[reply[0][i]] = reply[0][i + 1];
  return { view: runFromHash(ref, runId, hash, reply[1]), hash };
}
