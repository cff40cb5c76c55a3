import { z } from 'zod';
import { ToolInputError } from '../errors';

/**
 * zod input schemas of the workspace tools, mirroring the JSON schemas in `definitions.ts`.
 * Unknown keys are ignored (as OpenClaw's validation does); every known key is checked with a
 * message that names the field, so the model can fix its call.
 */

/** Message for a wrong or missing value: a missing required field says so instead of its type. */
const expected = (what: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`);

const pathString = z
  .string({ error: expected('a string') })
  .refine((value) => !value.includes('\0'), { error: 'must not contain NUL characters' });
const positiveInt = z
  .number({ error: expected('a number') })
  .int({ error: 'must be an integer' })
  .min(1, { error: 'must be at least 1' });
const nonNegativeInt = z
  .number({ error: expected('a number') })
  .int({ error: 'must be an integer' })
  .min(0, { error: 'must be at least 0' });
const flag = z.boolean({ error: expected('a boolean') });

export const ReadInputSchema = z.object({
  path: pathString.refine((value) => value.trim() !== '', { error: 'must be a non-empty path' }),
  offset: positiveInt.optional(),
  limit: positiveInt.optional(),
});
export type ReadInput = z.infer<typeof ReadInputSchema>;

export const LsInputSchema = z.object({
  path: pathString.optional(),
  limit: positiveInt.optional(),
});
export type LsInput = z.infer<typeof LsInputSchema>;

export const FindInputSchema = z.object({
  pattern: z.string({ error: expected('a string') }).min(1, { error: 'must be a non-empty glob pattern' }),
  path: pathString.optional(),
  limit: positiveInt.optional(),
});
export type FindInput = z.infer<typeof FindInputSchema>;

/** `include` is accepted as another spelling of `glob` (the name some agents use for it). */
export const GrepInputSchema = z
  .object({
    pattern: z.string({ error: expected('a string') }).min(1, { error: 'must be a non-empty pattern' }),
    path: pathString.optional(),
    glob: z.string({ error: expected('a string') }).optional(),
    include: z.string({ error: expected('a string') }).optional(),
    ignoreCase: flag.optional(),
    literal: flag.optional(),
    context: nonNegativeInt.optional(),
    limit: positiveInt.optional(),
  })
  .transform(({ include, ...rest }) => ({ ...rest, glob: rest.glob ?? include }));
export type GrepInput = z.output<typeof GrepInputSchema>;

/**
 * Parses a tool's input.
 * @throws ToolInputError naming the first bad field.
 */
export function parseToolInput<S extends z.ZodType>(toolName: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) {
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
  const detail = issue?.path.length === 0 && issue.code === 'invalid_type' ? 'must be an object' : (issue?.message ?? 'is invalid');
  throw new ToolInputError(toolName, field, detail);
}
