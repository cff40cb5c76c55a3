import type { RedisClient } from '@codemode/events';
import { guard, type KeySpace } from '@codemode/events';

export type TenancyMode = 'multi' | 'single';

/** The record outlives the API that wrote it by this much; every running API renews it well within. */
export const TENANCY_RECORD_TTL_SECONDS = 600;

/**
 * The deployment's tenancy mode, written by the API at start and renewed while it runs, and read
 * by workers (SPEC §10 "Mode"): a worker never receives the API keys, yet must know it serves a
 * keyed deployment. A worker keeps the last mode it read when the record expires.
 */
export class TenancyRecord {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async write(mode: TenancyMode): Promise<void> {
    await guard(() => this.redis.set(this.keys.tenancy(), mode, 'EX', TENANCY_RECORD_TTL_SECONDS));
  }

  /** The recorded mode, or null when no API has recorded one yet. */
  async read(): Promise<TenancyMode | null> {
    const raw = await guard(() => this.redis.get(this.keys.tenancy()));
    return raw === 'multi' || raw === 'single' ? raw : null;
  }
}
