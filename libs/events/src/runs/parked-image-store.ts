import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { guard } from '../platform/redis';

/** A parked run's image as stored (SPEC §12): the bytes and what they are bound to. */
export interface StoredParkedImage {
  /** The compressed VM image (libs/sandbox's envelope). */
  image: Buffer;
  /** sha256 of the wasm binary it was captured from. */
  wasmHash: string;
  /** The guest prelude/bridge version it was captured with. */
  preludeVersion: string;
  /** The run's epoch when it parked: an image of an older epoch is stale. */
  epoch: number;
  /** The worker's own state of the run beside the VM (JSON, opaque here). */
  host: string;
}

/**
 * Parked-run images in Redis (SPEC §12): one hash per run in its session's slot
 * (`<p>:{t:sid}:image:<runId>`), written with the run's `run.parked` in one script and replaced
 * whole at each park (RunLedger.park, lua/park-run.lua), expiring at the run's expiry; removed
 * when the run ends. The bindings are separate fields, so a worker can refuse an image of another
 * binary or prelude without fetching its bytes.
 */
export class ParkedImageStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async get(ref: SessionRef, runId: string): Promise<StoredParkedImage | null> {
    const raw = await guard(() => this.redis.hgetallBuffer(this.keys.parkedImage(ref, runId)));
    if (!raw.image || !raw.wasmHash || !raw.preludeVersion || !raw.epoch || !raw.host) return null;
    return {
      image: raw.image,
      wasmHash: raw.wasmHash.toString('utf8'),
      preludeVersion: raw.preludeVersion.toString('utf8'),
      epoch: Number(raw.epoch.toString('utf8')),
      host: raw.host.toString('utf8'),
    };
  }

  async has(ref: SessionRef, runId: string): Promise<boolean> {
    return (await guard(() => this.redis.exists(this.keys.parkedImage(ref, runId)))) === 1;
  }

  async delete(ref: SessionRef, runId: string): Promise<void> {
    await guard(() => this.redis.del(this.keys.parkedImage(ref, runId)));
  }

  /** Bytes Redis uses for the run's image key (`MEMORY USAGE`), null when there is none. */
  async memoryUsage(ref: SessionRef, runId: string): Promise<number | null> {
    const used = await guard(() => this.redis.memory('USAGE', this.keys.parkedImage(ref, runId), 'SAMPLES', 0));
    return typeof used === 'number' ? used : null;
  }
}
