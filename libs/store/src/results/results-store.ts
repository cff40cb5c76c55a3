import { randomUUID } from 'node:crypto';
import type { Limits, SessionRef } from '@codemode/contracts';
import { guard, type KeySpace, type ScriptLoader } from '@codemode/events';
import type { RedisClient } from '@codemode/events';
import { ResultIdError, ResultsCapacityError, ResultUnavailableError, ResultValueError, StoreArgumentError } from '../errors';
import { MAX_RESULTS } from '../limits';
import { storeScripts, type StoreScriptName } from '../scripts';
import { describeResult, type ResultDescriptor } from './describe-result';

/** The session limits that size the results store (SPEC §4, §8). */
export type ResultsLimits = Pick<Limits, 'resultsTtlSeconds' | 'memoryLimitBytes' | 'maxSnapshotBytes'>;

/** Ids this store hands out; anything else names no reference (and never reaches a key). */
const RESULT_ID_PATTERN = /^result_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * `results.save/load/delete` (SPEC §4): values kept in Redis per session, readable by any worker,
 * each for `resultsTtlSeconds`. At most 64 live references share min(memoryLimitBytes,
 * maxSnapshotBytes) bytes; a full store refuses, it never evicts. Count and bytes are accounted
 * atomically in Lua, and expired references stop counting at the next save or delete
 * (see lua/save-result.lua).
 */
export class ResultsStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader<StoreScriptName> = storeScripts(),
  ) {}

  /**
   * Keeps `valueJson` (the value's compact JSON, serialized by the guest) and answers its
   * descriptor (≤ 768 bytes of JSON).
   * @throws ResultsCapacityError when 64 references are live or their shared bytes would overflow
   * @throws ResultValueError when `valueJson` is not JSON text
   */
  async save(ref: SessionRef, valueJson: string, limits: ResultsLimits): Promise<ResultDescriptor> {
    const ttlSeconds = positiveInteger('resultsTtlSeconds', limits.resultsTtlSeconds);
    const maxBytes = Math.min(
      positiveInteger('memoryLimitBytes', limits.memoryLimitBytes),
      positiveInteger('maxSnapshotBytes', limits.maxSnapshotBytes),
    );
    // Refuse what can never fit before parsing it or sending it to Redis.
    if (Buffer.byteLength(valueJson, 'utf8') > maxBytes) throw new ResultsCapacityError('bytes');
    let value: unknown;
    try {
      value = JSON.parse(valueJson);
    } catch (err) {
      throw new ResultValueError(err instanceof Error ? err.message : String(err));
    }
    const id = `result_${randomUUID()}`;
    const descriptor = describeResult(id, valueJson, value);
    const keys = [this.keys.resultsIndex(ref), this.keys.resultsSizes(ref), this.keys.resultItem(ref, id)];
    const args = [id, valueJson, ttlSeconds * 1000, MAX_RESULTS, maxBytes];
    const reply = (await guard(() => this.scripts.run(this.redis, 'save-result', keys, args))) as [number, string];
    if (reply[0] !== 1) throw new ResultsCapacityError(reply[1] === 'count' ? 'count' : 'bytes');
    return descriptor;
  }

  /**
   * The saved value's JSON text (the caller parses it: each load is a detached copy).
   * @throws ResultIdError when `id` is not a non-empty string
   * @throws ResultUnavailableError when no live reference has that id (unknown, deleted, expired)
   */
  async load(ref: SessionRef, id: unknown): Promise<string> {
    const name = checkId(id);
    if (!isResultId(name)) throw new ResultUnavailableError();
    const json = await guard(() => this.redis.get(this.keys.resultItem(ref, name)));
    if (json === null) throw new ResultUnavailableError();
    return json;
  }

  /**
   * Deletes a reference, freeing its slot and bytes at once: true when a live one was deleted,
   * false when none had that id (the guest-facing `results.delete` rejects then, SPEC §4, with
   * ResultUnavailableError).
   * @throws ResultIdError when `id` is not a non-empty string
   */
  async delete(ref: SessionRef, id: unknown): Promise<boolean> {
    const name = checkId(id);
    if (!isResultId(name)) return false;
    const keys = [this.keys.resultsIndex(ref), this.keys.resultsSizes(ref), this.keys.resultItem(ref, name)];
    const reply = (await guard(() => this.scripts.run(this.redis, 'delete-result', keys, [name]))) as [number];
    return reply[0] === 1;
  }

  /** Live references and the bytes they share (tests, metrics). Expired ones not yet purged are left out. */
  async usage(ref: SessionRef): Promise<{ references: number; bytes: number }> {
    const time = await guard(() => this.redis.time());
    const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    const live = await guard(() => this.redis.zrangebyscore(this.keys.resultsIndex(ref), String(now), '+inf'));
    const sizes: (string | null)[] = live.length ? await guard(() => this.redis.hmget(this.keys.resultsSizes(ref), ...live)) : [];
    return { references: live.length, bytes: sizes.reduce((sum, size) => sum + Number(size ?? 0), 0) };
  }
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw new ResultIdError();
  return id;
}

function isResultId(id: string): boolean {
  return RESULT_ID_PATTERN.test(id);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new StoreArgumentError(name, 'must be a positive integer');
  return value;
}
