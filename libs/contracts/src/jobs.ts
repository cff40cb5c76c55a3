import { z } from 'zod';
import { CellSpecSchema } from './exec';
import { CodeModeResultSchema } from './result';
import { ShellConfigSchema } from './shell-config';

/** Queue names, defined once. The shared `shell` queue takes shell work for any worker. */
export const QUEUES = { shell: 'shell' } as const;

/**
 * The cell queue is split into shards (SPEC §13: `CODEMODE_QUEUE_SHARDS`), each a BullMQ queue
 * under its own hash tag, so a Redis Cluster spreads them; every worker consumes every shard.
 * They take new cells and replays of parked runs.
 */
export function cellQueueName(shard: number): string {
  return `cells-${shard}`;
}

/** The shard of a session's cells (FNV-1a of tenant and session id): the same on every process. */
export function cellQueueShard(tenant: string, sessionId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const char of `${tenant}\u0000${sessionId}`) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/**
 * Each worker's own queue (a sticky task queue): work for what lives in that worker's memory —
 * resumes and aborts of its parked runs — is routed here.
 */
export function workerQueueName(workerId: string): string {
  return `worker-${workerId}`;
}

export const JOB_NAMES = {
  runCell: 'run-cell',
  resumeRun: 'resume-run',
  abortRun: 'abort-run',
  shell: 'shell',
  toolResults: 'tool-results',
  replayRun: 'replay-run',
} as const;

export const CellJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  runId: z.string(),
  spec: CellSpecSchema,
  /** Pub/sub channel of the API instance waiting for this run's answer. */
  replyTo: z.string(),
  requestedAt: z.number(),
  /** SPEC §19: the id of the request that asked for the run, for the worker's log lines of it. */
  requestId: z.string().optional(),
});
export type CellJob = z.infer<typeof CellJobSchema>;

/** Messages a worker pushes to the waiting API instance (`runId` is a request id for `answer`). */
export const RunReplySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('started'), runId: z.string(), workerId: z.string() }),
  z.object({ kind: z.literal('result'), runId: z.string(), result: CodeModeResultSchema }),
  z.object({ kind: z.literal('answer'), runId: z.string(), answer: z.unknown() }),
]);
export type RunReply = z.infer<typeof RunReplySchema>;

/** A `wait` routed to the worker holding the parked run; `token` is the API's reservation. */
export const ResumeJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  runId: z.string(),
  token: z.string(),
  replyTo: z.string(),
  /** The wait body as the transcript keeps it. */
  input: z.unknown(),
  requestedAt: z.number(),
});
export type ResumeJob = z.infer<typeof ResumeJobSchema>;

/**
 * Rebuild a replay-safe run whose owner is gone (SPEC §6), on whichever worker takes it from the
 * shared queue. With `resume`, a `wait` reserved the parked run (its token) and is answered once
 * the run is rebuilt and resumed.
 */
export const ReplayJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  runId: z.string(),
  replyTo: z.string(),
  resume: z.object({ token: z.string(), input: z.unknown() }).optional(),
  requestedAt: z.number(),
});
export type ReplayJob = z.infer<typeof ReplayJobSchema>;

/** `DELETE …/runs/{runId}` routed to the worker holding the run. */
export const AbortJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  runId: z.string(),
  replyTo: z.string(),
});
export type AbortJob = z.infer<typeof AbortJobSchema>;

/**
 * A shell `exec` or `process` request (SPEC §7). Shell work of one scope (the session's agentId,
 * else the session) is served by one "home" worker, so list/poll/log see every live process.
 */
export const ShellJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  /** `agent:<agentId>` or `session:<sid>`. */
  scopeKey: z.string(),
  kind: z.enum(['exec', 'process']),
  input: z.record(z.string(), z.unknown()),
  config: ShellConfigSchema,
  requestId: z.string(),
  replyTo: z.string(),
});
export type ShellJob = z.infer<typeof ShellJobSchema>;

/** One platform answer to a pending client tool call (`POST …/tool-results`). */
export const ToolResultSchema = z.object({
  id: z.string().min(1),
  ok: z.boolean(),
  value: z.unknown().optional(),
  error: z.union([z.string(), z.object({ message: z.string(), name: z.string().optional() })]).optional(),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;
/** Each call is answered once: a repeated id in one request is refused before anything is recorded. */
export const ToolResultsInputSchema = z.object({
  results: z
    .array(ToolResultSchema)
    .max(128)
    .refine((results) => new Set(results.map((r) => r.id)).size === results.length, { message: 'each id may appear only once' }),
});

/** Tool results routed to the worker holding the parked run. */
export const ToolResultsJobSchema = z.object({
  tenant: z.string(),
  sessionId: z.string(),
  runId: z.string(),
  results: z.array(ToolResultSchema),
  requestId: z.string(),
  replyTo: z.string(),
});
export type ToolResultsJob = z.infer<typeof ToolResultsJobSchema>;
