import { z } from 'zod';
import { CellSpecSchema } from './exec';
import { CodeModeResultSchema } from './result';

/** Queue names, defined once. The shared `cells` queue takes only new cells. */
export const QUEUES = { cells: 'cells' } as const;
export const JOB_NAMES = { runCell: 'run-cell' } as const;

export const CellJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  runId: z.string(),
  spec: CellSpecSchema,
  /** Pub/sub channel of the API instance waiting for this run's answer. */
  replyTo: z.string(),
  requestedAt: z.number(),
});
export type CellJob = z.infer<typeof CellJobSchema>;

/** Messages a worker pushes to the waiting API instance. */
export const RunReplySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('started'), runId: z.string(), workerId: z.string() }),
  z.object({ kind: z.literal('result'), runId: z.string(), result: CodeModeResultSchema }),
]);
export type RunReply = z.infer<typeof RunReplySchema>;
