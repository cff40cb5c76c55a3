import { z } from 'zod';
import { CodeModeResultSchema } from './result';

export const RUN_STATUSES = ['requested', 'running', 'waiting', 'completed', 'failed', 'expired', 'lost'] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** The statuses a run never leaves: it has its one terminal event. */
export const ENDED_RUN_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['completed', 'failed', 'expired', 'lost']);
export const isEndedStatus = (status: RunStatus): boolean => ENDED_RUN_STATUSES.has(status);

/** `GET /v1/sessions/{sid}/runs/{runId}`: the run projection. */
export const RunViewSchema = z.object({
  runId: z.string(),
  sessionId: z.string(),
  title: z.string(),
  status: RunStatusSchema,
  restartSafe: z.boolean(),
  owner: z.string().nullable(),
  epoch: z.number().int(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  parkedAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
  updatedAt: z.string(),
  lastResult: CodeModeResultSchema.nullable(),
});
export type RunView = z.infer<typeof RunViewSchema>;
