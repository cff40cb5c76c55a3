import { z } from 'zod';
import { LimitsInputSchema, LimitsSchema } from './limits';
import { PolicySchema } from './policy';
import { ShellConfigInputSchema, ShellConfigSchema } from './shell-config';
import { WebhookEndpointSchema } from './tools';

/** `PUT /v1/sessions/{sid}`: merges into the stored configuration. */
export const SessionPutInputSchema = z.object({
  agentId: z.string().min(1).max(128).nullable().optional(),
  codeMode: LimitsInputSchema.optional(),
  shell: ShellConfigInputSchema.optional(),
  /**
   * SPEC §11: the session's tool policy, merged over the tenant's; operator keys only. `null`
   * removes it (the session then runs under the tenant's policy alone), as GET shows a session
   * without one.
   */
  policy: PolicySchema.nullable().optional(),
  /** SPEC §15: installs `agents` in the session's cells. */
  agents: z.boolean().optional(),
  /** SPEC §16: failed cells in a row a model may repair (0–10, clamped; anything else: the default). */
  repairAttempts: z
    .unknown()
    .describe('Failed cells in a row a model may repair (SPEC §16): an integer 0–10, default 2, 0 turning repair off.')
    .optional(),
  /** SPEC §7: where background shell sessions' exits are POSTed; null clears it. */
  notifyUrl: WebhookEndpointSchema.nullable().optional(),
});
export type SessionPutInput = z.infer<typeof SessionPutInputSchema>;

/** A setting a session `PUT` named that the session does not get as asked (SPEC §8 clamps and defaults, §10 ceilings). */
export const ClampedSettingSchema = z.object({
  /** `codeMode.<limit>` or `shell.<setting>`. */
  setting: z.string(),
  requested: z.unknown(),
  /** The value the session runs with. */
  applied: z.number().int(),
});
export type ClampedSetting = z.infer<typeof ClampedSettingSchema>;

export const SessionConfigSchema = z.object({
  sessionId: z.string(),
  agentId: z.string().nullable(),
  codeMode: LimitsSchema,
  shell: ShellConfigSchema,
  /** The session's own tool policy (SPEC §11); null when it has none. */
  policy: PolicySchema.nullable().optional(),
  /** SPEC §15: cells have `agents.run` (default false). */
  agents: z.boolean(),
  /** SPEC §16: the session's repair attempts, default 2. */
  repairAttempts: z.number().int(),
  /** Where background shell sessions' exits are POSTed (SPEC §7); null when none. */
  notifyUrl: z.string().nullable(),
  /** `PUT` only, when some: the settings it named that were clamped or fell back to their default, with the values applied. */
  clamped: z.array(ClampedSettingSchema).optional(),
});
export type SessionConfig = z.infer<typeof SessionConfigSchema>;

/** `GET /v1/sessions/{sid}`. */
export const SessionViewSchema = SessionConfigSchema.extend({
  counts: z.object({ runs: z.number().int(), events: z.number().int(), transcriptEntries: z.number().int() }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SessionView = z.infer<typeof SessionViewSchema>;

/** `DELETE /v1/sessions/{sid}` (SPEC §10): the session and everything of it are gone; its live runs were aborted first. */
export const SessionDeletedSchema = z.object({
  sessionId: z.string(),
  deleted: z.literal(true),
  /** The runs that were live (requested, running or parked) and were aborted first. */
  abortedRuns: z.array(z.string()),
});
export type SessionDeleted = z.infer<typeof SessionDeletedSchema>;
