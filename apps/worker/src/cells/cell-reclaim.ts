import type { PendingCellEntry } from '@codemode/events';

/**
 * Deliveries after which an entry is acknowledged and dropped rather than handled once more: the
 * first and two re-deliveries, as BullMQ's `maxStalledCount: 2` allows a job (CellsProcessor). A
 * run whose workers keep dying is ended by the live-run sweeper.
 */
export const MAX_CELL_DELIVERIES = 3;

/** The consumers, other than `self`, holding entries in `pending`: those whose lease to look at. */
export function otherConsumers(pending: readonly PendingCellEntry[], self: string): string[] {
  return [...new Set(pending.map((entry) => entry.consumer))].filter((consumer) => consumer !== self);
}

/**
 * SPEC §13: entries are reclaimed only from consumers whose worker's lease has lapsed; never from
 * a live one, however long its entry has been pending (a 60 s cell, a run held for approval), and
 * never from `self` (its own entries are running here or looked at again later).
 */
export function reclaimable(pending: readonly PendingCellEntry[], self: string, alive: ReadonlySet<string>): PendingCellEntry[] {
  return pending.filter((entry) => entry.consumer !== self && !alive.has(entry.consumer));
}

/**
 * Entries pending under `self` that this worker does not hold (`holds`: not in hand, not to be
 * looked at again): a read Redis answered whose reply never came back (a reset connection, a
 * blocking read timed out client-side or sent again after a reconnect), or an acknowledgement that
 * failed. Nobody else takes an entry from a live consumer, so this worker takes them back itself.
 */
export function unseenOwn(pending: readonly PendingCellEntry[], self: string, holds: (entryId: string) => boolean): PendingCellEntry[] {
  return pending.filter((entry) => entry.consumer === self && !holds(entry.id));
}

/** A claimed entry, `deliveries` counting the claim, that is dropped instead of handled. */
export function deliveredTooOften(deliveries: number): boolean {
  return deliveries > MAX_CELL_DELIVERIES;
}
