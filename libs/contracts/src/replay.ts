import { z } from 'zod';
import type { ToolResult } from './jobs';

/**
 * What one leg of a restartSafe run did inside its VM, in the order it happened: the bridge
 * requests it made (`[id, argsJson]`), the settlements it applied (`[id, ok, payloadJson]`,
 * payload `null` where the log already holds it: yields and sleeps settle with `null`, tool
 * calls with their `tool.settled` result) and the clock values the guest read. Kept in the
 * leg's `run.parked` event, so another worker can rebuild the parked VM exactly (SPEC §6).
 */
export const LegJournalSchema = z.object({
  calls: z.array(z.tuple([z.string(), z.string()])),
  settled: z.array(z.tuple([z.string(), z.boolean(), z.string().nullable()])),
  clock: z.array(z.number()),
  /** Bridge ids still open when the leg parked (yields, and calls a replay must pick up again). */
  open: z.array(z.string()).optional(),
  /** When each timer the leg started is due (epoch ms): a replay re-arms open ones for what is left. */
  timers: z.array(z.tuple([z.string(), z.number()])).optional(),
});
export type LegJournal = z.infer<typeof LegJournalSchema>;

/** What a restartSafe run records when it starts: its random seed and the catalog it saw. */
export const RunRecoverySeedSchema = z.object({
  /** Four uint32 words seeding the guest's Math.random (sfc32). */
  seed: z.array(z.number().int().min(0).max(0xffffffff)).length(4),
  /** sha256 of the guest catalog JSON: a replay under a different catalog is a divergence. */
  catalogHash: z.string(),
});
export type RunRecoverySeed = z.infer<typeof RunRecoverySeedSchema>;

/** A tool call of the leg that was running when its worker died, with its recorded outcome. */
export const TailCallSchema = z.object({
  /** The tool's callable name as the log recorded it. */
  tool: z.string(),
  /** The call's `input` as the log recorded it (compact JSON). */
  inputJson: z.string(),
  ok: z.boolean(),
  payload: z.string(),
});

/**
 * How to rebuild a run from its log: every parked leg's journal with all payloads filled in,
 * their clock values in order, and the recorded outcomes of calls no journal settled (calls still
 * open when the run last parked, and calls of an unfinished last leg), by bridge id. Built by the
 * worker from the log, followed by the sandbox to the letter.
 */
export const ReplayPlanSchema = z.object({
  legs: z.array(
    z.object({
      calls: z.array(z.tuple([z.string(), z.string()])),
      settled: z.array(z.tuple([z.string(), z.boolean(), z.string()])),
      open: z.array(z.string()).optional(),
      timers: z.array(z.tuple([z.string(), z.number()])).optional(),
    }),
  ),
  clock: z.array(z.number()),
  tail: z.record(z.string(), TailCallSchema),
});
export type ReplayPlan = z.infer<typeof ReplayPlanSchema>;

/** A tool call's outcome as the guest sees it: the value, or the error `{name, message}` it rejects with. */
export type ToolOutcome = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string } };

/**
 * A platform's answer to a client tool call (`POST …/tool-results`) as the guest sees it: the
 * value, or the error `{name, message}` the call rejects with. A replay-safe run's `tool.settled`
 * keeps it as `result` / `failure`, so a replay answers the call the same way.
 */
export function platformToolOutcome(result: ToolResult): ToolOutcome {
  if (result.ok) return { ok: true, value: result.value ?? null };
  const error =
    typeof result.error === 'string'
      ? { message: result.error || 'client tool failed' }
      : (result.error ?? { message: 'client tool failed' });
  return { ok: false, error: { name: error.name ?? 'Error', message: error.message } };
}
