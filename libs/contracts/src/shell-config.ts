import { z } from 'zod';

/** Session overrides of the shell defaults (SPEC §7); resolved like limits. */
export const ShellConfigInputSchema = z
  .object({
    backgroundMs: z.unknown(),
    timeoutSeconds: z.unknown(),
    cleanupMs: z.unknown(),
    maxOutputChars: z.unknown(),
    pendingMaxOutputChars: z.unknown(),
    inputWaitIdleMs: z.unknown(),
  })
  .partial();
export type ShellConfigInput = z.infer<typeof ShellConfigInputSchema>;

export const ShellConfigSchema = z.object({
  backgroundMs: z.number().int(),
  timeoutSeconds: z.number().int(),
  cleanupMs: z.number().int(),
  maxOutputChars: z.number().int(),
  pendingMaxOutputChars: z.number().int(),
  inputWaitIdleMs: z.number().int(),
});
export type ShellConfig = z.infer<typeof ShellConfigSchema>;
