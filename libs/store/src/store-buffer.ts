import { StoreCapacityError, StoreKeyError, StoreValueTooLargeError } from './errors';
import { toJsonText, utf8Bytes } from './json';
import { MAX_STORE_BYTES, MAX_STORE_KEY_CHARS, MAX_STORE_VALUE_BYTES } from './limits';

/** What `load(key)` finds: a detached copy of the value, or nothing. */
export type StoreLookup = { found: false } | { found: true; value: unknown };

/**
 * One run's view of the session store: the committed snapshot it started from plus its own
 * buffered writes, which are committed only when the cell completes (`SessionStore.commit`).
 * Lives in the worker's main thread; pure, no Redis.
 *
 * Limits (SPEC §4), checked on every `set` before anything changes, so a refused write leaves
 * the buffer as it was: key 1–256 UTF-16 units; value ≤ 256 KiB of UTF-8 JSON; the whole store
 * as this run sees it (committed values overlaid with its writes) ≤ 1 MiB, counted as the sum of
 * the values' UTF-8 JSON bytes (keys are not counted, as in OpenClaw). A delete never fails on
 * capacity, so an over-full store can always be emptied. The commit re-checks capacity against
 * the store as it is then (other cells may have committed meanwhile).
 */
export class StoreBuffer {
  private readonly committed: ReadonlyMap<string, string>;
  /** Buffered writes in first-write order: JSON text, or null for a delete. */
  private readonly pending = new Map<string, string | null>();
  /** Bytes of each value in this run's view (committed overlaid with pending). */
  private readonly sizes = new Map<string, number>();
  private total = 0;

  /** @param committed the session's committed store: key → value JSON text. Copied. */
  constructor(committed: ReadonlyMap<string, string>) {
    this.committed = new Map(committed);
    for (const [key, json] of this.committed) {
      const bytes = utf8Bytes(json);
      this.sizes.set(key, bytes);
      this.total += bytes;
    }
  }

  /**
   * `store(key, value)`: buffers a detached JSON copy of `value`; `undefined` deletes the key,
   * `null` is kept as a value.
   * @throws StoreKeyError (TypeError), StoreValueNotSerializableError (TypeError),
   *   StoreValueTooLargeError (RangeError), StoreCapacityError (RangeError)
   */
  set(key: unknown, value: unknown): void {
    const name = checkKey(key);
    const previous = this.sizes.get(name) ?? 0;
    if (value === undefined) {
      this.pending.set(name, null);
      this.sizes.delete(name);
      this.total -= previous;
      return;
    }
    const json = toJsonText(value);
    const bytes = utf8Bytes(json);
    if (bytes > MAX_STORE_VALUE_BYTES) throw new StoreValueTooLargeError(bytes);
    const total = this.total - previous + bytes;
    if (total > MAX_STORE_BYTES) throw new StoreCapacityError(total);
    this.pending.set(name, json);
    this.sizes.set(name, bytes);
    this.total = total;
  }

  /**
   * `load(key)`: this run's own buffered write if any, else the committed value; each call
   * returns a fresh copy.
   * @throws StoreKeyError (TypeError)
   */
  get(key: unknown): StoreLookup {
    const name = checkKey(key);
    const json = this.pending.has(name) ? this.pending.get(name) : this.committed.get(name);
    return json === undefined || json === null ? { found: false } : { found: true, value: JSON.parse(json) as unknown };
  }

  /** The buffered changes to commit, in first-write order: key → JSON text, or null to delete. */
  writes(): Map<string, string | null> {
    return new Map(this.pending);
  }

  /** True once the run has buffered any write. */
  get dirty(): boolean {
    return this.pending.size > 0;
  }

  /** Bytes of value JSON in this run's view of the store. */
  get totalBytes(): number {
    return this.total;
  }
}

/** The SPEC's key rule; returns the key typed. */
export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_STORE_KEY_CHARS) throw new StoreKeyError();
  return key;
}
