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
    notifyOnExit: z.unknown(),
    notifyOnExitEmptySuccess: z.unknown(),
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
  // Defaulted (SPEC §7's defaults, as libs/config's SHELL_SWITCHES) so that a run's settings
  // recorded before the switches existed still read.
  /** Whether a background session's end is POSTed to the session's `notifyUrl`. */
  notifyOnExit: z.boolean().default(true),
  /** Whether a successful exit that printed nothing is POSTed too. */
  notifyOnExitEmptySuccess: z.boolean().default(false),
});
export type ShellConfig = z.infer<typeof ShellConfigSchema>;

/** The on/off shell settings; every other one is a clamped integer. */
export type ShellSwitch = 'notifyOnExit' | 'notifyOnExitEmptySuccess';
/** The integer shell settings (SPEC §7 defaults and clamps). */
export type ShellNumberSetting = Exclude<keyof ShellConfig, ShellSwitch>;
