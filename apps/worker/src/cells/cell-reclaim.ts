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

/** A claimed entry, `deliveries` counting the claim, that is dropped instead of handled. */
export function deliveredTooOften(deliveries: number): boolean {
  return deliveries > MAX_CELL_DELIVERIES;
}
