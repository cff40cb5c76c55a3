import { z } from 'zod';
import { LimitsSchema } from './limits';
import { ShellConfigSchema } from './shell-config';

/** The body of `exec` as the model wrote it; validated by hand (SPEC §3 input rules). */
export const CodeModeExecInputSchema = z.object({
  title: z.string(),
  code: z.string().optional(),
  command: z.string().optional(),
  restartSafe: z.boolean().optional(),
  awaitResults: z.boolean().optional(),
});
export type CodeModeExecInput = z.infer<typeof CodeModeExecInputSchema>;

/** An exec input that passed every input rule: one `code`, flags resolved. */
export const ValidExecInputSchema = z.object({
  title: z.string(),
  code: z.string(),
  restartSafe: z.boolean(),
  awaitResults: z.boolean(),
});
export type ValidExecInput = z.infer<typeof ValidExecInputSchema>;

export const WaitInputSchema = z.object({ runId: z.string().optional(), run_id: z.string().optional() });
export type WaitInput = z.infer<typeof WaitInputSchema>;

/** The cell as a worker receives it, with the session settings it runs under. */
export const CellSpecSchema = ValidExecInputSchema.extend({
  limits: LimitsSchema,
  shell: ShellConfigSchema,
  /** Scopes the shell processes the cell starts (SPEC §1); null: the session itself. */
  agentId: z.string().nullable(),
  /** SPEC §15: the session has `agents: true`; absent in specs recorded before it existed (false). */
  agents: z.boolean().optional(),
});
export type CellSpec = z.infer<typeof CellSpecSchema>;
