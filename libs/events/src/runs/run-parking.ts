import type { SessionRef } from '@codemode/contracts';
import type { AppendOf } from '../log/event-log';
import { encodeEvent, rawsAndFactsArgs } from '../log/event-encoding';
import type { KeySpace } from '../platform/keys';
import { checkReply } from '../platform/lua-errors';
import type { StoredParkedImage } from './parked-image-store';
import { guard, type RedisClient } from '../platform/redis';
import type { ScriptLoader } from '../platform/script-loader';

/** A park as its worker records it: the `run.parked` event (fenced by `epoch`), and the run's image when it has one. */
export type ParkInput = Omit<AppendOf<'run.parked'>, 'type' | 'runId' | 'epoch'> & {
  runId: string;
  epoch: number;
  /** The image of the parked VM (SPEC §12); null: the run parks in its worker's memory only. */
  image: StoredParkedImage | null;
};

/**
 * Records a park with its image in one script (lua/park-run.lua): both keys are in the session's
 * slot, so this holds on a Redis Cluster too. The image key expires at the instant the event
 * records as the run's expiry (`data.expiresAt`). Without an image, the event is appended alone
 * through the generic path (`append`).
 */
export async function parkRun(
  redis: RedisClient,
  keys: KeySpace,
  scripts: ScriptLoader,
  ref: SessionRef,
  input: ParkInput,
  append: (input: AppendOf<'run.parked'>) => Promise<{ eventId: string }>,
): Promise<{ eventId: string }> {
  const { runId, epoch, image, data, publish } = input;
  if (!image) return append({ type: 'run.parked', runId, epoch, data, publish });
  const ev = encodeEvent('run.parked', data);
  const args = [
    runId,
    epoch,
    ev.head,
    publish?.channel ?? '',
    publish?.message ?? '',
    Date.parse(data.expiresAt),
    image.image,
    image.wasmHash,
    image.preludeVersion,
    image.host,
    ...rawsAndFactsArgs(ev),
  ];
  const keysOf = [...keys.scriptKeys(ref, runId), keys.parkedImage(ref, runId)];
  const raw = await guard(() => scripts.run(redis, 'park-run', keysOf, args));
  return { eventId: String(checkReply(raw, { runId, epoch, type: 'run.parked' })[1]) };
}
