import type { LoggedEvent } from '../event-encoding';

/**
 * Recomputes the committed session store (key → value JSON text) from the log, by the rules of
 * lua/includes/append.lua (project_store): each `store.committed` sets its `set` keys and removes
 * its `deleted` ones. Values were JSON.stringify output, so parse + stringify gives the same text.
 */
export function rebuildStore(events: readonly LoggedEvent[]): Map<string, string> {
  const store = new Map<string, string>();
  for (const event of events) {
    if (event.type !== 'store.committed') continue;
    const set = (event.data.set ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(set)) store.set(key, JSON.stringify(set[key]));
    for (const key of (event.data.deleted ?? []) as string[]) store.delete(key);
  }
  return store;
}

/** Bytes of value JSON a store holds: what the capacity check counts (keys are not counted). */
export function storeBytes(store: ReadonlyMap<string, string>): number {
  let bytes = 0;
  for (const json of store.values()) bytes += Buffer.byteLength(json, 'utf8');
  return bytes;
}
