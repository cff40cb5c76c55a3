import { z } from 'zod';
import { CodeModeResultSchema } from './result';

/** One transcript line: an exec/wait input or the result it got, in log order. */
export const TranscriptEntrySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('input'),
    call: z.enum(['exec', 'wait']),
    runId: z.string().nullable(),
    at: z.string(),
    input: z.unknown(),
  }),
  z.object({
    kind: z.literal('result'),
    call: z.enum(['exec', 'wait']),
    runId: z.string().nullable(),
    at: z.string(),
    result: CodeModeResultSchema,
  }),
]);
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;
export const TranscriptSchema = z.object({ entries: z.array(TranscriptEntrySchema) });
