import type { SessionRef } from '@codemode/contracts';
import { StoreLedger, type KeySpace, type ScriptLoader, type StoreWrites } from '@codemode/events';
import type { RedisClient } from '@codemode/events';
import { StoreCapacityError, StoreValueTooLargeError } from './errors';
import { utf8Bytes } from './json';
import { MAX_STORE_BYTES, MAX_STORE_VALUE_BYTES } from './limits';
import { checkKey } from './store-buffer';

/** A cell's commit: the run that wrote, its lease epoch, and `StoreBuffer.writes()`. */
export interface StoreCommit {
  runId: string;
  epoch: number;
  writes: StoreWrites;
}

/** What a commit did: the `store.committed` event id, or null when there was nothing to commit. */
export interface StoreCommitReceipt {
  eventId: string | null;
}

/**
 * The committed session store (`store`/`load`, `GET /sessions/{sid}/store`): a projection of the
 * log's `store.committed` events, written by libs/events' commit script. Values are JSON text
 * end to end; they are parsed only for the REST view and by `StoreBuffer.get`.
 */
export class SessionStore {
  private readonly ledger: StoreLedger;

  constructor(redis: RedisClient, keys: KeySpace, scripts?: ScriptLoader) {
    this.ledger = new StoreLedger(redis, keys, scripts);
  }

  /** The committed store (key → value JSON text), to start a run's `StoreBuffer` from. */
  snapshot(ref: SessionRef): Promise<Map<string, string>> {
    return this.ledger.read(ref);
  }

  /**
   * Commits a completed cell's writes: one `store.committed` `{runId, set, deleted}` and the store
   * hash in one script, fenced by the run's epoch, with the 1 MiB capacity re-checked at commit
   * time, in commit order. Call it before the run's terminal event: a run that has ended cannot
   * commit. No writes: nothing is written and `eventId` is null.
   * @throws StoreCapacityError (RangeError) when the store, as it is now, would exceed 1 MiB;
   *   nothing of this commit is written
   * @throws StoreKeyError, StoreValueTooLargeError for writes a StoreBuffer would have refused
   * @throws RunAlreadyEndedError, StaleEpochError, RunNotFoundError (from libs/events)
   */
  async commit(ref: SessionRef, commit: StoreCommit): Promise<StoreCommitReceipt> {
    if (commit.writes.size === 0) return { eventId: null };
    for (const [key, json] of commit.writes) {
      checkKey(key);
      if (json !== null && utf8Bytes(json) > MAX_STORE_VALUE_BYTES) throw new StoreValueTooLargeError(utf8Bytes(json));
    }
    const outcome = await this.ledger.commit(ref, { ...commit, capacityBytes: MAX_STORE_BYTES });
    if (!outcome.committed) throw new StoreCapacityError(outcome.wouldBe);
    return { eventId: outcome.eventId };
  }

  /** `GET /sessions/{sid}/store`: the committed values, by key; null when the session does not exist. */
  async values(ref: SessionRef): Promise<{ values: Record<string, unknown> } | null> {
    const store = await this.ledger.readIfSession(ref);
    if (!store) return null;
    const entries = [...store].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // fromEntries defines own properties, so a key like "__proto__" stays an ordinary key.
    return { values: Object.fromEntries(entries.map(([key, json]) => [key, JSON.parse(json) as unknown])) };
  }
}
