import { z } from 'zod';

/**
 * SPEC §16 "Bounded repair": what a failed result tells a model about running a corrected cell.
 * Decided where the run ends, atomically with the session's count of failed cells in a row
 * (libs/events `lua/includes/repair.lua`).
 */
export const RepairSchema = z
  .object({
    allowed: z.boolean(),
    remainingAttempts: z.number().int(),
    reason: z.string(),
  })
  .describe('SPEC §16 bounded repair: whether the model may run a corrected cell, and why.');
export type Repair = z.infer<typeof RepairSchema>;

/** SPEC §16: the one sentence of `repair.reason`, by case. */
export const REPAIR_REASONS = Object.freeze({
  allowed: 'no tool call was dispatched; correct the cell and run it again.',
  dispatched: 'a tool call was dispatched; check its effect before running anything again.',
  exhausted: 'no repair attempts left; report the failure.',
});
