import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { InvalidArgumentError } from '../platform/errors';
import { encodeStoreCommit, storeKeyOfField } from '../log/event-encoding';
import type { KeySpace } from '../platform/keys';
import { checkReply, LUA_CODES } from '../platform/lua-errors';
import { execMulti, guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';

/** One cell's store writes: key → value JSON text, or null to delete the key. */
export type StoreWrites = ReadonlyMap<string, string | null>;

export interface StoreCommitInput {
  runId: string;
  /** The committing worker's lease epoch (fenced like every run write). */
  epoch: number;
  writes: StoreWrites;
  /** Most bytes of value JSON the whole store may hold after a commit that grows it. */
  capacityBytes: number;
}

export type StoreCommitOutcome =
  | { committed: true; eventId: string; totalBytes: number }
  /** Over capacity at commit time (a concurrent commit may have filled the store); nothing written. */
  | { committed: false; totalBytes: number; wouldBe: number };

/**
 * The session store projection of the log (`store.committed`): the hash of committed values and
 * the commit path that keeps it, the event and the capacity check in one script. Values are JSON
 * text, kept verbatim; parsing and the SPEC's limits on single writes belong to libs/store.
 */
export class StoreLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {}

  /**
   * Appends one `store.committed` `{runId, set, deleted}` and applies it to the store hash in the
   * same script, if the run may still write (exists, epoch not stale, not ended) and the store
   * stays within `capacityBytes` counted at commit time, in commit order.
   * @throws RunAlreadyEndedError, StaleEpochError, RunNotFoundError (nothing written)
   */
  async commit(ref: SessionRef, input: StoreCommitInput): Promise<StoreCommitOutcome> {
    const { runId, epoch, writes, capacityBytes } = input;
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 0) {
      throw new InvalidArgumentError('capacityBytes', 'must be a non-negative integer');
    }
    const enc = encodeStoreCommit(runId, writes);
    const keys = [...this.keys.scriptKeys(ref, runId), this.keys.store(ref)];
    const args = [runId, epoch, enc.data, capacityBytes, enc.sets.length, ...enc.sets.flat(), ...enc.deleted];
    const raw = await guard(() => this.scripts.run(this.redis, 'commit-store', keys, args));
    const reply = checkReply(raw, { runId, epoch, type: 'store.committed' });
    if (reply[0] === LUA_CODES.ok) return { committed: true, eventId: String(reply[1]), totalBytes: Number(reply[2]) };
    return { committed: false, totalBytes: Number(reply[1]), wouldBe: Number(reply[2]) };
  }

  /** The committed values (key → JSON text); empty when nothing was ever committed. */
  async read(ref: SessionRef): Promise<Map<string, string>> {
    return fromHash(await guard(() => this.redis.hgetall(this.keys.store(ref))));
  }

  /** Like `read`, but null when the session was never created (REST answers 404). */
  async readIfSession(ref: SessionRef): Promise<Map<string, string> | null> {
    const multi = this.redis.multi().exists(this.keys.session(ref)).hgetall(this.keys.store(ref));
    const [exists, hash] = (await execMulti(multi)) as [number, Record<string, string>];
    return exists === 1 ? fromHash(hash) : null;
  }

  /** Bytes of value JSON the committed store holds (what the capacity check counts). */
  async totalBytes(ref: SessionRef): Promise<number> {
    return Number((await guard(() => this.redis.hget(this.keys.session(ref), 'storeBytes'))) ?? 0);
  }
}

function fromHash(hash: Record<string, string>): Map<string, string> {
  const values = new Map<string, string>();
  for (const [field, json] of Object.entries(hash)) values.set(storeKeyOfField(field), json);
  return values;
}
