import { z } from 'zod';

/**
 * Per-session Code Mode limits (SPEC §8). Every field is optional on input; a value that is not
 * a positive integer falls back to the deployment default and is then clamped, so the input
 * schema accepts anything per field and `libs/config` does the resolving.
 */
export const LimitsInputSchema = z
  .object({
    timeoutMs: z.unknown(),
    memoryLimitBytes: z.unknown(),
    maxOutputBytes: z.unknown(),
    maxSnapshotBytes: z.unknown(),
    maxPendingToolCalls: z.unknown(),
    snapshotTtlSeconds: z.unknown(),
    searchDefaultLimit: z.unknown(),
    maxSearchLimit: z.unknown(),
    resultsTtlSeconds: z.unknown(),
  })
  .partial();
export type LimitsInput = z.infer<typeof LimitsInputSchema>;

/** Limits after defaults and clamps: what a run actually gets. */
export const LimitsSchema = z.object({
  timeoutMs: z.number().int(),
  memoryLimitBytes: z.number().int(),
  maxOutputBytes: z.number().int(),
  maxSnapshotBytes: z.number().int(),
  maxPendingToolCalls: z.number().int(),
  snapshotTtlSeconds: z.number().int(),
  searchDefaultLimit: z.number().int(),
  maxSearchLimit: z.number().int(),
  resultsTtlSeconds: z.number().int(),
});
export type Limits = z.infer<typeof LimitsSchema>;
